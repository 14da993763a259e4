# label: hazard raises
# why: t_s_flat is a reshape view of a torch.chunk output (multi-output view) of the homography grid, and `t_s_flat[t_s_flat.abs() < eps] = eps` writes into it in place
# source: https://github.com/kail8/UnsupDIS-pytorch/issues/26
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _interpolate(im, x, y, out_size):
    bs, nc, height, width = im.shape
    grid = torch.stack([x, y], dim=-1).reshape(bs, out_size[0], out_size[1], 2)
    out = F.grid_sample(im, grid, mode='bilinear', padding_mode='zeros', align_corners=True)
    return out.permute(0, 2, 3, 1).reshape(-1, nc)


def transform(image2_tensor, H_tf):
    def _meshgrid(height, width):
        x_t = torch.mm(torch.ones(height, 1), torch.linspace(-1.0, 1.0, width).unsqueeze(0))
        y_t = torch.mm(torch.linspace(-1.0, 1.0, height).unsqueeze(1), torch.ones(1, width))
        x_t_flat = x_t.reshape(1, -1)
        y_t_flat = y_t.reshape(1, -1)
        ones = torch.ones_like(x_t_flat)
        grid = torch.cat([x_t_flat, y_t_flat, ones], dim=0)
        return grid

    bs, nc, height, width = image2_tensor.shape
    H_tf = H_tf.reshape(-1, 3, 3).float()
    grid = _meshgrid(height, width).unsqueeze(0).expand(bs, -1, -1)

    # Transform A x (x_t, y_t, 1)^T -> (x_s, y_s)
    T_g = torch.bmm(H_tf, grid)  # [bs,3,3] x [bs,3,w*h] -> [bs,3,w*h]
    x_s, y_s, t_s = torch.chunk(T_g, 3, dim=1)
    t_s_flat = t_s.reshape(-1)
    eps, maximal = 1e-2, 10.
    t_s_flat[t_s_flat.abs() < eps] = eps  # <-- IPL001: in-place write into a view of torch.chunk's output

    x_s_flat = x_s.reshape(-1) / t_s_flat
    y_s_flat = y_s.reshape(-1) / t_s_flat
    input_transformed = _interpolate(image2_tensor, x_s_flat, y_s_flat, (height, width))
    output = input_transformed.reshape(bs, height, width, nc).permute(0, 3, 1, 2)
    return output


class HEstimator(nn.Module):
    def __init__(self):
        super(HEstimator, self).__init__()
        self.features = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(4, 8)
        nn.init.zeros_(self.fc.weight)

    def forward(self, img1, img2):
        offsets = self.fc(self.features(torch.cat([img1, img2], 1)).flatten(1)) * 0.01
        H = torch.eye(3).reshape(1, 9).repeat(img1.size(0), 1)
        H = torch.cat([H[:, :8] + offsets, H[:, 8:]], dim=1)
        return H


model = HEstimator()
input1 = torch.rand(1, 1, 6, 6)  # test-time stitching uses batch size 1
input2 = torch.rand(1, 1, 6, 6)
H_tf = model(input1, input2)
warp2 = transform(input2, H_tf)
l1_loss = (warp2 - input1).abs().mean()
l1_loss.backward()

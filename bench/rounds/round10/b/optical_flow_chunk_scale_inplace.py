# label: hazard raises
# why: the predicted flow is split with flow.chunk(2, dim=1) and each component is rescaled in place (u *= u_scale), but in-place ops on views returned by a multi-output function are forbidden.
# source: https://github.com/pytorch/pytorch/issues/46820
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FlowEstimator(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(6, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.1),
                                     nn.Conv2d(8, 8, 3, padding=1), nn.LeakyReLU(0.1))
        self.predict_flow = nn.Conv2d(8, 2, 3, padding=1)

    def forward(self, img1, img2):
        return self.predict_flow(self.encoder(torch.cat([img1, img2], dim=1)))


def resize_flow(flow, size):
    h, w = flow.shape[-2:]
    new_h, new_w = size
    flow = F.interpolate(flow, size=size, mode="bilinear", align_corners=False)
    u_scale = new_w / w
    v_scale = new_h / h
    u, v = flow.chunk(2, dim=1)
    u *= u_scale  # <-- IPL001: u is one of chunk's multiple output views
    v *= v_scale  # <-- IPL001: v is one of chunk's multiple output views
    return torch.cat([u, v], dim=1)


def warp(img, flow):
    B, _, H, W = img.shape
    ys, xs = torch.meshgrid(torch.arange(H), torch.arange(W), indexing="ij")
    grid_x = (xs[None].float() + flow[:, 0]) / (W - 1) * 2 - 1
    grid_y = (ys[None].float() + flow[:, 1]) / (H - 1) * 2 - 1
    grid = torch.stack([grid_x, grid_y], dim=-1)
    return F.grid_sample(img, grid, align_corners=True)


net = FlowEstimator()
img1, img2 = torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8)
flow_low = net(img1, img2)
flow = resize_flow(flow_low, (8, 8))
photometric_loss = (warp(img2, flow) - img1).abs().mean()
photometric_loss.backward()

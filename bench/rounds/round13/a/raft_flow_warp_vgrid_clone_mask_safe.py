# label: safe
# why: warp() rescales vgrid channels with slice assignment from a .clone() and binarizes the grid_sample mask in place; none of these tensors is saved by a backward that runs after the write.
# source: https://github.com/princeton-vl/RAFT/issues/64
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def warp(x, flo):
    """
    warp an image/tensor (im2) back to im1, according to the optical flow
    x: [B, C, H, W] (im2)
    flo: [B, 2, H, W] flow
    """
    B, C, H, W = x.size()
    # mesh grid
    xx = torch.arange(0, W).view(1, -1).repeat(H, 1)
    yy = torch.arange(0, H).view(-1, 1).repeat(1, W)
    xx = xx.view(1, 1, H, W).repeat(B, 1, 1, 1)
    yy = yy.view(1, 1, H, W).repeat(B, 1, 1, 1)
    grid = torch.cat((xx, yy), 1).float()

    vgrid = grid + flo
    # scale grid to [-1,1]
    vgrid[:, 0, :, :] = 2.0 * vgrid[:, 0, :, :].clone() / max(W - 1, 1) - 1.0
    vgrid[:, 1, :, :] = 2.0 * vgrid[:, 1, :, :].clone() / max(H - 1, 1) - 1.0

    vgrid = vgrid.permute(0, 2, 3, 1)
    output = F.grid_sample(x, vgrid, align_corners=True)
    mask = torch.ones(x.size())
    mask = F.grid_sample(mask, vgrid, align_corners=True)

    mask[mask < 0.999] = 0
    mask[mask > 0] = 1

    return output * mask


class FlowHead(nn.Module):
    def __init__(self, input_dim=6, hidden_dim=8):
        super(FlowHead, self).__init__()
        self.conv1 = nn.Conv2d(input_dim, hidden_dim, 3, padding=1)
        self.conv2 = nn.Conv2d(hidden_dim, 2, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.conv2(self.relu(self.conv1(x)))


flow_head = FlowHead()
image1 = torch.rand(2, 3, 8, 8)
image2 = torch.rand(2, 3, 8, 8)
flow_predictions = [flow_head(torch.cat([image1, image2], 1)) * 2.0]
image2_warped = warp(image2, flow_predictions[-1])
photometric_loss = (image2_warped - image1).abs().mean()
photometric_loss.backward()

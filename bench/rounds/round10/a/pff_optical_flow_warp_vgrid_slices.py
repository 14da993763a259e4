# label: safe
# why: the slice writes rescale vgrid, a fresh `grid + flo` sum that no backward formula saved, and the mask edits touch a grid_sample output before anything uses it
# source: https://github.com/aimerykong/predictive-filter-flow/issues/5
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

    mask[mask < 0.9999] = 0
    mask[mask > 0] = 1

    return output * mask


class FlowNetLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(6, 8, 3, padding=1), nn.LeakyReLU(0.1, inplace=True),
                                 nn.Conv2d(8, 2, 3, padding=1))

    def forward(self, im1, im2):
        return self.net(torch.cat([im1, im2], 1))


model = FlowNetLite()
im1 = torch.rand(2, 3, 8, 8)
im2 = torch.roll(im1, shifts=1, dims=3) + 0.01 * torch.randn(2, 3, 8, 8)
flow = model(im1, im2)
im2_warped = warp(im2, flow)
photometric_loss = (im2_warped - im1).abs().mean()
photometric_loss.backward()

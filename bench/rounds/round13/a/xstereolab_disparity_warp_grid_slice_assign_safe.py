# label: safe
# why: warp() writes disparity-shifted coordinates into slices of a freshly built (grad-free) mesh grid and rescales them by slice assignment; no backward saved the overwritten values, so the in-place writes are safe even without .clone().
# source: https://github.com/meteorshowers/X-StereoLab/issues/18
import torch
import torch.nn as nn

torch.manual_seed(0)


def warp(x, disp):
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

    vgrid = grid
    vgrid[:, :1, :, :] = vgrid[:, :1, :, :] - disp

    # scale grid to [-1,1]
    vgrid[:, 0, :, :] = 2.0 * vgrid[:, 0, :, :] / max(W - 1, 1) - 1.0
    vgrid[:, 1, :, :] = 2.0 * vgrid[:, 1, :, :] / max(H - 1, 1) - 1.0

    vgrid = vgrid.permute(0, 2, 3, 1)
    output = nn.functional.grid_sample(x, vgrid, align_corners=True)
    return output


class DispRefine(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.feat = nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), nn.LeakyReLU(0.1, inplace=True))
        self.res = nn.Conv2d(2 * ch + 1, 1, 3, padding=1)

    def forward(self, left, right, disp):
        fl = self.feat(left)
        fr = self.feat(right)
        fr_warp = warp(fr, disp)
        return disp + self.res(torch.cat([fl, fr_warp, disp], 1))


refine = DispRefine()
left = torch.rand(2, 3, 8, 12)
right = torch.rand(2, 3, 8, 12)
disp = torch.rand(2, 1, 8, 12) * 3
disps = []
for it in range(2):
    disp = refine(left, right, disp)
    disps.append(disp)
recon = warp(right, disps[-1])
loss = (recon - left).abs().mean() + 0.1 * disps[-1].abs().mean()
loss.backward()

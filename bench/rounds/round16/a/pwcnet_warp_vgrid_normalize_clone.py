# label: safe
# why: the slice assignments normalise vgrid = grid + flo in place; the right-hand sides are computed (from a clone) before the write and nothing saved vgrid's old values, so gradients match the out-of-place version.
# source: https://github.com/NVlabs/PWC-Net/issues/88
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PWCDCNetWarp(nn.Module):
    def __init__(self):
        super(PWCDCNetWarp, self).__init__()
        self.predict_flow = nn.Conv2d(6, 2, kernel_size=3, padding=1)

    def warp(self, x, flo):
        """
        warp an image/tensor (im2) back to im1, according to the optical flow
        x: [B, C, H, W] (im2)
        flo: [B, 2, H, W] flow
        """
        B, C, H, W = x.size()
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

    def forward(self, im1, im2):
        flow = self.predict_flow(torch.cat([im1, im2], 1))
        warped = self.warp(im2, flow)
        return flow, warped


net = PWCDCNetWarp()
im1 = torch.rand(1, 3, 8, 8)
im2 = torch.rand(1, 3, 8, 8)
flow, warped = net(im1, im2)
loss = (warped - im1).abs().mean() + 0.01 * flow.abs().mean()
loss.backward()

# label: safe
# why: PWC-Net's warp rescales vgrid channels and binarizes the grid_sample mask with slice/mask assignments, and refines flow2 with `+=`, but none of those tensors has been saved by an op before the write.
# source: https://github.com/NVlabs/PWC-Net/pull/62
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)


def conv(in_planes, out_planes, kernel_size=3, stride=1, padding=1, dilation=1):
    return nn.Sequential(
        nn.Conv2d(in_planes, out_planes, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation, bias=True),
        nn.LeakyReLU(0.1))


def predict_flow(in_planes):
    return nn.Conv2d(in_planes, 2, kernel_size=3, stride=1, padding=1, bias=True)


def deconv(in_planes, out_planes, kernel_size=4, stride=2, padding=1):
    return nn.ConvTranspose2d(in_planes, out_planes, kernel_size, stride, padding, bias=True)


def corr(f1, f2, md=1):
    B, C, H, W = f1.shape
    f2p = nn.functional.pad(f2, [md, md, md, md])
    out = []
    for dy in range(2 * md + 1):
        for dx in range(2 * md + 1):
            out.append((f1 * f2p[:, :, dy:dy + H, dx:dx + W]).mean(1, keepdim=True))
    return torch.cat(out, 1)


class PWCDCNet(nn.Module):
    def __init__(self, md=1):
        super(PWCDCNet, self).__init__()
        self.md = md
        self.conv1a = conv(3, 4, kernel_size=3, stride=2)
        self.conv2a = conv(4, 6, kernel_size=3, stride=2)
        self.leakyRELU = nn.LeakyReLU(0.1)
        nd = (2 * md + 1) ** 2
        self.predict_flow3 = predict_flow(nd + 6)
        self.deconv3 = deconv(2, 2)
        od = nd + 4 + 2
        self.conv2_0 = conv(od, 8)
        self.predict_flow2 = predict_flow(od + 8)
        self.dc_conv1 = conv(od + 8, 8, kernel_size=3, stride=1, padding=2, dilation=2)
        self.dc_conv7 = predict_flow(8)

    def warp(self, x, flo):
        B, C, H, W = x.size()
        xx = torch.arange(0, W).view(1, -1).repeat(H, 1)
        yy = torch.arange(0, H).view(-1, 1).repeat(1, W)
        xx = xx.view(1, 1, H, W).repeat(B, 1, 1, 1)
        yy = yy.view(1, 1, H, W).repeat(B, 1, 1, 1)
        grid = torch.cat((xx, yy), 1).float()
        vgrid = Variable(grid) + flo

        # scale grid to [-1,1]
        vgrid[:, 0, :, :] = 2.0 * vgrid[:, 0, :, :] / max(W - 1, 1) - 1.0
        vgrid[:, 1, :, :] = 2.0 * vgrid[:, 1, :, :] / max(H - 1, 1) - 1.0

        vgrid = vgrid.permute(0, 2, 3, 1)
        output = nn.functional.grid_sample(x, vgrid, align_corners=True)
        mask = torch.autograd.Variable(torch.ones(x.size()))
        mask = nn.functional.grid_sample(mask, vgrid, align_corners=True)

        mask[mask < 0.9999] = 0
        mask[mask > 0] = 1

        return output * mask

    def forward(self, x):
        im1 = x[:, :3, :, :]
        im2 = x[:, 3:, :, :]
        c11 = self.conv1a(im1)
        c21 = self.conv1a(im2)
        c12 = self.conv2a(c11)
        c22 = self.conv2a(c21)

        corr3 = self.leakyRELU(corr(c12, c22, self.md))
        x = torch.cat((corr3, c12), 1)
        flow3 = self.predict_flow3(x)
        up_flow3 = self.deconv3(flow3)

        warp2 = self.warp(c21, up_flow3 * 5.0)
        corr2 = self.leakyRELU(corr(c11, warp2, self.md))
        x = torch.cat((corr2, c11, up_flow3), 1)
        x = torch.cat((self.conv2_0(x), x), 1)
        flow2 = self.predict_flow2(x)

        x = self.dc_conv1(x)
        flow2 += self.dc_conv7(x)
        if self.training:
            return flow2, flow3
        return flow2


net = PWCDCNet()
frames = torch.rand(2, 6, 16, 16)
gt_flow2 = torch.randn(2, 2, 8, 8)
gt_flow3 = torch.randn(2, 2, 4, 4)
flow2, flow3 = net(frames)
epe = (flow2 - gt_flow2).norm(dim=1).mean() + 0.5 * (flow3 - gt_flow3).norm(dim=1).mean()
epe.backward()

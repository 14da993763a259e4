# label: safe
# why: timm-style MBConv: SiLU(inplace=True) after BatchNorm and an SE gate computed with `sigmoid_()` on a fresh conv output; the gate is only read afterwards, never rewritten.
import torch
import torch.nn as nn
import torch.nn.functional as F


class SqueezeExcite(nn.Module):
    def __init__(self, in_chs, rd_ratio=0.25):
        super().__init__()
        rd_channels = max(1, int(in_chs * rd_ratio))
        self.conv_reduce = nn.Conv2d(in_chs, rd_channels, 1, bias=True)
        self.act1 = nn.SiLU(inplace=True)
        self.conv_expand = nn.Conv2d(rd_channels, in_chs, 1, bias=True)

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.conv_reduce(x_se)
        x_se = self.act1(x_se)
        x_se = self.conv_expand(x_se)
        x_se.sigmoid_()
        return x * x_se


class InvertedResidual(nn.Module):
    def __init__(self, in_chs, out_chs, exp_ratio=4.0):
        super().__init__()
        mid_chs = int(in_chs * exp_ratio)
        self.has_skip = in_chs == out_chs
        self.conv_pw = nn.Conv2d(in_chs, mid_chs, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid_chs)
        self.conv_dw = nn.Conv2d(mid_chs, mid_chs, 3, padding=1, groups=mid_chs, bias=False)
        self.bn2 = nn.BatchNorm2d(mid_chs)
        self.se = SqueezeExcite(mid_chs)
        self.conv_pwl = nn.Conv2d(mid_chs, out_chs, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_chs)

    def forward(self, x):
        shortcut = x
        x = self.conv_pw(x)
        x = self.bn1(x)
        x = F.silu(x, inplace=True)
        x = self.conv_dw(x)
        x = self.bn2(x)
        x = F.silu(x, inplace=True)
        x = self.se(x)
        x = self.conv_pwl(x)
        x = self.bn3(x)
        if self.has_skip:
            x = x + shortcut
        return x


torch.manual_seed(0)
blocks = nn.Sequential(InvertedResidual(4, 4), InvertedResidual(4, 6), InvertedResidual(6, 6))
inp = torch.randn(2, 4, 6, 6)
out = blocks(inp)
loss = out.pow(2).mean()
loss.backward()

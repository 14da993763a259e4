# label: safe
# why: the top-down pass rebinds laterals[i - 1] to a new sum, so the ReLU outputs the blocks saved stay untouched.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.conv(x))


class TopDown(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lateral_convs = nn.ModuleList()
        for channels in in_channels:
            self.lateral_convs.append(ConvBlock(channels, out_channels))

    def forward(self, inputs):
        laterals = [conv(inputs[i]) for i, conv in enumerate(self.lateral_convs)]
        for i in range(len(laterals) - 1, 0, -1):
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], scale_factor=2.0)
        return laterals


neck = TopDown([2, 4], 3)
feats = [torch.randn(1, 2, 4, 4), torch.randn(1, 4, 2, 2)]
outs = neck(feats)
loss = sum(o.pow(2).mean() for o in outs)
loss.backward()

# label: hazard raises
# why: BiFPNModule normalizes its fusion weights with w1 /= ... and w2 /= ... right after nn.ReLU, overwriting the ReLU outputs that ReluBackward0 saved, so backward through the fused pyramid fails.
# source: https://github.com/toandaominh1997/EfficientDet.Pytorch/issues/161 (models/bifpn.py at commit 197f3f75907aba7187dc1756f931c10be3545d70)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, activation=None, inplace=False):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activation = activation
        if activation == 'relu':
            self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.activation:
            x = self.activate(x)
        return x


class BiFPNModule(nn.Module):
    def __init__(self, channels, levels, init=0.5, activation=None, eps=0.0001):
        super().__init__()
        self.activation = activation
        self.eps = eps
        self.levels = levels
        self.bifpn_convs = nn.ModuleList()
        # weighted
        self.w1 = nn.Parameter(torch.Tensor(2, levels).fill_(init))
        self.relu1 = nn.ReLU()
        self.w2 = nn.Parameter(torch.Tensor(3, levels - 2).fill_(init))
        self.relu2 = nn.ReLU()
        for jj in range(2):
            for i in range(self.levels - 1):
                fpn_conv = nn.Sequential(
                    ConvModule(channels, channels, 3, padding=1, activation=self.activation, inplace=False))
                self.bifpn_convs.append(fpn_conv)

    def forward(self, inputs):
        assert len(inputs) == self.levels
        levels = self.levels
        # w relu
        w1 = self.relu1(self.w1)
        w1 /= torch.sum(w1, dim=0) + self.eps  # <-- IPL001: overwrites the ReLU output saved by ReluBackward0
        w2 = self.relu2(self.w2)
        w2 /= torch.sum(w2, dim=0) + self.eps  # <-- IPL001: overwrites the ReLU output saved by ReluBackward0
        # build top-down
        idx_bifpn = 0
        pathtd = inputs
        inputs_clone = []
        for in_tensor in inputs:
            inputs_clone.append(in_tensor.clone())

        for i in range(levels - 1, 0, -1):
            pathtd[i - 1] = (w1[0, i - 1] * pathtd[i - 1] + w1[1, i - 1] * F.interpolate(
                pathtd[i], scale_factor=2, mode='nearest')) / (w1[0, i - 1] + w1[1, i - 1] + self.eps)
            pathtd[i - 1] = self.bifpn_convs[idx_bifpn](pathtd[i - 1])
            idx_bifpn = idx_bifpn + 1
        # build down-top
        for i in range(0, levels - 2, 1):
            pathtd[i + 1] = (w2[0, i] * pathtd[i + 1] + w2[1, i] * F.max_pool2d(pathtd[i], kernel_size=2) +
                             w2[2, i] * inputs_clone[i + 1]) / (w2[0, i] + w2[1, i] + w2[2, i] + self.eps)
            pathtd[i + 1] = self.bifpn_convs[idx_bifpn](pathtd[i + 1])
            idx_bifpn = idx_bifpn + 1

        pathtd[levels - 1] = (w1[0, levels - 1] * pathtd[levels - 1] + w1[1, levels - 1] * F.max_pool2d(
            pathtd[levels - 2], kernel_size=2)) / (w1[0, levels - 1] + w1[1, levels - 1] + self.eps)
        pathtd[levels - 1] = self.bifpn_convs[idx_bifpn](pathtd[levels - 1])
        return pathtd


class BIFPN(nn.Module):
    def __init__(self, in_channels, out_channels, stack=1, activation='relu'):
        super().__init__()
        self.in_channels = in_channels
        self.lateral_convs = nn.ModuleList(
            [ConvModule(c, out_channels, 1, activation=activation, inplace=False) for c in in_channels])
        self.stack_bifpn_convs = nn.ModuleList(
            [BiFPNModule(channels=out_channels, levels=len(in_channels), activation=activation) for _ in range(stack)])

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]
        for bifpn_module in self.stack_bifpn_convs:
            laterals = bifpn_module(laterals)
        return tuple(laterals)


neck = BIFPN(in_channels=[3, 5, 6], out_channels=4)
feats = [torch.randn(2, 3, 8, 8), torch.randn(2, 5, 4, 4), torch.randn(2, 6, 2, 2)]
outs = neck(feats)
loss = sum(o.pow(2).mean() for o in outs)
loss.backward()

# label: safe
# why: Cadene SENet bottleneck: `out = self.se_module(out) + residual`-style code rewritten as `out += residual`; the SE product is a mul *output* (mul keeps its inputs, not its result), so the in-place add and ReLU are harmless.
from collections import OrderedDict

import torch
import torch.nn as nn


class SEModule(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(OrderedDict([
            ("fc1", nn.Conv2d(channels, channels // reduction, kernel_size=1, padding=0)),
            ("relu", nn.ReLU(inplace=True)),
            ("fc2", nn.Conv2d(channels // reduction, channels, kernel_size=1, padding=0)),
            ("sigmoid", nn.Sigmoid()),
        ]))

    def forward(self, x):
        module_input = x
        x = self.avg_pool(x)
        x = self.fc(x)
        return module_input * x


class SEResNeXtBottleneck(nn.Module):
    def __init__(self, inplanes, planes, groups, reduction, downsample=None):
        super().__init__()
        width = planes * 2
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.se_module = SEModule(planes * 4, reduction=reduction)
        self.downsample = downsample

    def forward(self, x):
        residual = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            residual = self.downsample(x)
        out = self.se_module(out)
        out += residual
        out = self.relu(out)
        return out


torch.manual_seed(0)
ds = nn.Sequential(nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm2d(16))
units = nn.Sequential(SEResNeXtBottleneck(8, 4, 2, 4, downsample=ds), SEResNeXtBottleneck(16, 4, 2, 4))
x = torch.randn(2, 8, 5, 5)
y = units(x)
loss = y.mean() + y.std()
loss.backward()

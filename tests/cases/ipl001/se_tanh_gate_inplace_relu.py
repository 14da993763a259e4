# label: hazard raises
# why: the SE gate Sequential clips its Tanh output with ReLU(inplace=True), overwriting the tensor Tanh saved for its backward.
from collections import OrderedDict

import torch
import torch.nn as nn


class SEGate(nn.Module):
    """Squeeze-excitation with a rectified-tanh gate (values in [0, 1))."""

    def __init__(self, channels, reduction=2):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.excite = nn.Sequential(OrderedDict([
            ("reduce", nn.Conv2d(channels, channels // reduction, 1)),
            ("act", nn.ReLU(inplace=True)),
            ("expand", nn.Conv2d(channels // reduction, channels, 1)),
            ("tanh", nn.Tanh()),
            ("clip", nn.ReLU(inplace=True)),  # <-- IPL001: overwrites the Tanh output saved for backward
        ]))

    def forward(self, x):
        return x * self.excite(self.pool(x))


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.se = SEGate(cout)

    def forward(self, x):
        return self.se(self.relu(self.bn(self.conv(x))))


torch.manual_seed(0)
net = nn.Sequential(ConvBlock(3, 4), ConvBlock(4, 4))
x = torch.randn(2, 3, 5, 5)
out = net(x)
loss = out.mean()
loss.backward()

# label: safe no-twin
# why: torchvision/timm-style `_init_weights` uses nn.init.*_ (which run under no_grad) and explicit `with torch.no_grad()` fills on parameters before any forward pass.
import math

import torch
import torch.nn as nn
from torch.nn import init


class ConvNet(nn.Module):
    def __init__(self, num_classes=4, zero_init_residual=True):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.cls_token = nn.Parameter(torch.zeros(1, 8))
        self.fc = nn.Linear(8, num_classes)
        self.zero_init_residual = zero_init_residual
        self.apply(self._init_weights)
        if zero_init_residual:
            with torch.no_grad():
                self.bn2.weight.fill_(0.5)
        init.trunc_normal_(self.cls_token, std=0.02)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, nn.Conv2d):
            init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            init.constant_(m.weight, 1)
            init.constant_(m.bias, 0)
        elif isinstance(m, nn.Linear):
            bound = 1 / math.sqrt(m.in_features)
            init.uniform_(m.weight, -bound, bound)
            with torch.no_grad():
                m.bias.zero_()

    def forward(self, x):
        identity = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(identity))
        out += identity
        out = self.relu(out)
        feat = out.mean((2, 3)) + self.cls_token
        return self.fc(feat)


torch.manual_seed(0)
net = ConvNet()
data = torch.randn(3, 3, 6, 6)
target = torch.tensor([0, 1, 3])
loss = nn.functional.cross_entropy(net(data), target)
loss.backward()

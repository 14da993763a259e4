# label: safe
# why: ResNeXt-style Bottleneck stack built with nn.Sequential/OrderedDict downsample; in-place ReLU and `out += identity` only touch BN outputs and the sum, which no backward formula keeps.
from collections import OrderedDict

import torch
from torch import nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, groups=1, base_width=4, downsample=None):
        super().__init__()
        width = int(planes * (base_width / 4.0)) * groups
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


def make_layer(inplanes, planes, blocks, stride, groups):
    downsample = None
    if stride != 1 or inplanes != planes * Bottleneck.expansion:
        downsample = nn.Sequential(OrderedDict([
            ("conv", nn.Conv2d(inplanes, planes * Bottleneck.expansion, 1, stride, bias=False)),
            ("bn", nn.BatchNorm2d(planes * Bottleneck.expansion)),
        ]))
    layers = [Bottleneck(inplanes, planes, stride, groups, downsample=downsample)]
    for _ in range(1, blocks):
        layers.append(Bottleneck(planes * Bottleneck.expansion, planes, groups=groups))
    return nn.Sequential(*layers)


class TinyResNeXt(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.stem = nn.Sequential(OrderedDict([
            ("conv1", nn.Conv2d(3, 8, 3, 1, 1, bias=False)),
            ("bn1", nn.BatchNorm2d(8)),
            ("relu", nn.ReLU(inplace=True)),
            ("pool", nn.MaxPool2d(2)),
        ]))
        self.stages = nn.ModuleList([make_layer(8, 4, 2, 1, 2), make_layer(16, 8, 2, 2, 2)])
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        x = x.mean((2, 3))
        return self.fc(x)


torch.manual_seed(0)
model = TinyResNeXt()
inputs = torch.randn(2, 3, 12, 12)
logits = model(inputs)
loss = nn.functional.cross_entropy(logits, torch.tensor([0, 2]))
loss.backward()

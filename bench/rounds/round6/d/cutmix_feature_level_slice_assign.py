# label: hazard raises
# why: feature-level CutMix pastes a shuffled patch into the layer1 output in place, but that tensor is the block's final ReLU output, saved by ReluBackward
# source: https://github.com/clovaai/CutMix-PyTorch/issues/5 (rand_bbox and the mixed loss from train.py; resnet.py BasicBlock)
import math
import random

import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)


def rand_bbox(size, lam):
    W = size[2]
    H = size[3]
    cut_rat = math.sqrt(1. - lam)
    cut_w = int(W * cut_rat)
    cut_h = int(H * cut_rat)

    # uniform
    cx = random.randint(0, W - 1)
    cy = random.randint(0, H - 1)

    bbx1 = min(max(cx - cut_w // 2, 0), W)
    bby1 = min(max(cy - cut_h // 2, 0), H)
    bbx2 = min(max(cx + cut_w // 2, 0), W)
    bby2 = min(max(cy + cut_h // 2, 0), H)

    return bbx1, bby1, bbx2, bby2


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        residual = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out += residual
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, num_classes=3):
        super(ResNet, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = BasicBlock(8, 8)
        self.layer2 = BasicBlock(8, 8)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x, rand_index=None, lam=None):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)

        if rand_index is not None:
            # Feature CutMix
            bbx1, bby1, bbx2, bby2 = rand_bbox(x.size(), lam)
            x[:, :, bbx1:bbx2, bby1:bby2] = x[rand_index, :, bbx1:bbx2, bby1:bby2]  # <-- IPL001: x is layer1's final ReLU output, saved for backward
            # adjust lambda to exactly match pixel ratio
            lam = 1 - ((bbx2 - bbx1) * (bby2 - bby1) / (x.size()[-1] * x.size()[-2]))

        x = self.layer2(x)
        x = self.avgpool(x).flatten(1)
        return self.fc(x), lam


model = ResNet()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

input = torch.randn(4, 3, 8, 8)
target = torch.tensor([0, 1, 2, 1])
lam = 0.5
rand_index = torch.randperm(input.size()[0])
target_a = target
target_b = target[rand_index]

output, lam = model(input, rand_index, lam)
loss = criterion(output, target_a) * lam + criterion(output, target_b) * (1. - lam)
optimizer.zero_grad()
loss.backward()
optimizer.step()

# label: hazard raises
# why: _initialize_biases adds the objectness/class priors through a view of the Detect conv bias, a leaf Parameter that requires grad, outside torch.no_grad().
# source: https://github.com/Lornatang/YOLOv4-PyTorch/issues/6
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    def __init__(self, nc=3, anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(8, 16)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.stride = torch.tensor([8.0, 16.0])
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        out = []
        for i in range(self.nl):
            out.append(self.m[i](x[i]))
        return out


class YOLO(nn.Module):
    def __init__(self, number_classes=3):
        super().__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 16, 3, 2, 1)])
        self.detect = Detect(nc=number_classes)
        self._initialize_biases()  # only run once

    def _initialize_biases(self, cf=None):
        m = self.detect
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # <-- IPL003: in-place add through a view of a leaf bias Parameter that requires grad
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = nn.Parameter(b.view(-1), requires_grad=True)

    def forward(self, x):
        feats = []
        for conv in self.backbone:
            x = conv(x).relu()
            feats.append(x)
        return self.detect(feats)


model = YOLO(number_classes=3)
imgs = torch.randn(2, 3, 16, 16)
outs = model(imgs)
loss = sum(o.sigmoid().mean() for o in outs)
loss.backward()

# label: hazard raises
# why: _initialize_biases takes a view of the Detect conv bias (a leaf Parameter) and adds the prior in place outside torch.no_grad().
# source: https://github.com/WongKinYiu/ScaledYOLOv4/issues/191
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    def __init__(self, nc=4, anchors=(), ch=()):
        super(Detect, self).__init__()
        self.stride = None
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, nc=4):
        super(Model, self).__init__()
        self.backbone = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.LeakyReLU(0.1, inplace=True)),
            nn.Sequential(nn.Conv2d(8, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.LeakyReLU(0.1, inplace=True)),
        ])
        anchors = [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]]
        self.model = nn.ModuleList([Detect(nc, anchors, (8, 8))])
        m = self.model[-1]
        s = 32
        m.stride = torch.tensor([s / x.shape[-2] for x in self.forward(torch.zeros(1, 3, s, s))])
        m.anchors /= m.stride.view(-1, 1, 1)
        self.stride = m.stride
        self._initialize_biases()

    def forward(self, x):
        feats = []
        for layer in self.backbone:
            x = layer(x)
            feats.append(x)
        return self.model[-1](feats)

    def _initialize_biases(self, cf=None):
        m = self.model[-1]
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # <-- IPL003: in-place add on a view of the bias Parameter
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # <-- IPL003: in-place add on a view of the bias Parameter
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model = Model(nc=4)
imgs = torch.rand(2, 3, 32, 32)
pred = model(imgs)
loss = sum(p[..., 4].sigmoid().mean() for p in pred)
loss.backward()

# label: hazard raises
# why: _initialize_biases takes a view of the Detect conv bias (a leaf Parameter that requires grad) and adds the objectness/class priors to it in place, outside torch.no_grad().
# source: https://github.com/ultralytics/yolov5/commit/9922c1183ffa09f7c90cfe9cbabc058d4d2ec3d8
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None

    def __init__(self, nc=80, anchors=(), ch=()):
        super(Detect, self).__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer("anchors", a)
        self.register_buffer("anchor_grid", a.clone().view(self.nl, 1, -1, 1, 1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, nc=3, anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(8, 16)):
        super(Model, self).__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(3, ch[0], 3, 2, 1), nn.Conv2d(ch[0], ch[1], 3, 2, 1)])
        detect = Detect(nc, anchors, ch)
        detect.stride = torch.tensor([2.0, 4.0])
        self.model = nn.ModuleList([*self.backbone, detect])
        self._initialize_biases()

    def forward(self, x):
        p3 = torch.relu(self.model[0](x))
        p4 = torch.relu(self.model[1](p3))
        return self.model[-1]([p3, p4])

    def _initialize_biases(self, cf=None):
        m = self.model[-1]
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # <-- IPL003: in-place on a view of the conv bias, a leaf that requires grad
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # <-- IPL003: in-place on a view of the conv bias, a leaf that requires grad
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model = Model()
preds = model(torch.randn(2, 3, 16, 16))
loss = sum(p[..., 4].sigmoid().mean() for p in preds)
loss.backward()

# label: hazard raises
# why: _initialize_biases views the Detect conv bias (a leaf Parameter) and adds the objectness/class priors with `b[:, 4] += ...` outside torch.no_grad(), an in-place write to a view of a leaf that requires grad
# source: https://github.com/gengyanlei/fire-smoke-detect-yolov4/issues/33
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None

    def __init__(self, nc=2, anchors=(), ch=()):
        super(Detect, self).__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        out = []
        for i in range(self.nl):
            y = self.m[i](x[i])
            bs, _, ny, nx = y.shape
            out.append(y.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous())
        return out


class Model(nn.Module):
    def __init__(self, nc=2):
        super(Model, self).__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU())
        self.neck = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU())
        self.model = nn.ModuleList([self.backbone, self.neck, Detect(nc, [[10, 13, 16, 30], [30, 61, 62, 45]], (8, 16))])
        m = self.model[-1]
        m.stride = torch.tensor([8., 16.])
        self._initialize_biases()  # only run once

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # <-- IPL003: in-place add into a view of the leaf bias Parameter
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # <-- IPL003: same, class prior
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)

    def forward(self, img):
        p3 = self.backbone(img)
        p4 = self.neck(p3)
        return self.model[-1]([p3, p4])


model = Model(nc=2)
imgs = torch.randn(2, 3, 32, 32)
pred = model(imgs)
loss = sum(p[..., 4].sigmoid().mean() for p in pred)
loss.backward()

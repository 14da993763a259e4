# label: hazard raises
# why: _initialize_biases takes b = mi.bias.view(m.na, -1) of a Parameter and adds the objectness/class priors with b[:, 4] += ..., an in-place write to a view of a leaf that requires grad, which recent PyTorch rejects at model construction.
# source: https://github.com/zymk9/yolov5_anime/issues/6
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    def __init__(self, nc=2, anchors=(), ch=()):
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
    def __init__(self, nc=2):
        super(Model, self).__init__()
        self.model = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.BatchNorm2d(4), nn.SiLU()),
            nn.Sequential(nn.Conv2d(4, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.SiLU()),
            Detect(nc, anchors=([10, 13, 16, 30], [30, 61, 62, 45]), ch=(4, 8)),
        ])
        m = self.model[-1]
        m.stride = torch.tensor([2.0, 4.0])
        m.anchors /= m.stride.view(-1, 1, 1)
        self.stride = m.stride
        self._initialize_biases()

    def forward(self, x):
        p3 = self.model[0](x)
        p4 = self.model[1](p3)
        return self.model[2]([p3, p4])

    def _initialize_biases(self, cf=None):
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # <-- IPL003: in-place write to a view of the bias Parameter
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # <-- IPL003: in-place write to a view of the bias Parameter
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model = Model(nc=2)
imgs = torch.rand(2, 3, 16, 16)
pred = model(imgs)
loss = sum(p[..., 4].sigmoid().mean() for p in pred)
loss.backward()

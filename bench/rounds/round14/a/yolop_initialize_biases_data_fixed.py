# label: safe
# why: the fix writes the bias priors through b.data, so the in-place adds touch the parameter storage without autograd tracking the leaf, and the new Parameter is built from the updated values.
# source: https://github.com/hustvl/YOLOP/pull/17
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None  # strides computed during build

    def __init__(self, nc=2, anchors=((3, 4, 5, 6), (8, 9, 10, 12)), ch=(4, 8)):
        super(Detect, self).__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor 85
        self.nl = len(anchors)  # number of detection layers 3
        self.na = len(anchors[0]) // 2  # number of anchors 3
        self.grid = [torch.zeros(1)] * self.nl  # init grid
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer("anchors", a)  # shape(nl,na,2)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape  # x(bs,255,w,w) to x(bs,3,w,w,85)
            x[i] = x[i].view(bs, self.na, self.no, ny * nx).permute(0, 1, 3, 2).contiguous()
            z.append(x[i])
        return z


class MCnet(nn.Module):
    def __init__(self):
        super(MCnet, self).__init__()
        self.detector_index = 2
        self.model = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.SiLU()),
            nn.Sequential(nn.Conv2d(4, 8, 3, 2, 1), nn.SiLU()),
            Detect(),
        ])
        Detector = self.model[self.detector_index]
        Detector.stride = torch.tensor([8.0, 16.0])
        self._initialize_biases()

    def forward(self, x):
        p3 = self.model[0](x)
        p4 = self.model[1](p3)
        return self.model[self.detector_index]([p3, p4])

    def _initialize_biases(self, cf=None):
        # initialize biases into Detect(), cf is class frequency
        m = self.model[self.detector_index]  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b.data[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)
            b.data[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model = MCnet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
imgs = torch.randn(2, 3, 16, 16)
outs = model(imgs)
loss = sum(o[..., 4].sigmoid().mean() for o in outs)
loss.backward()
optimizer.step()

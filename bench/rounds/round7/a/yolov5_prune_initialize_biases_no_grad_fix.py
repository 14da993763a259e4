# label: safe
# why: the fix from the issue thread wraps the bias adjustments in torch.no_grad(), so writing through the view of the leaf bias is allowed and nothing is recorded.
# source: https://github.com/xhwNobody/yolov5_prune_sfp/issues/17
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    def __init__(self, nc=80, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119)), ch=(8, 16)):
        super(Detect, self).__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)
        self.stride = torch.tensor([8., 16.])

    def forward(self, x):
        return [self.m[i](x[i]) for i in range(self.nl)]


class Model(nn.Module):
    def __init__(self, nc=80):
        super(Model, self).__init__()
        self.head_self = Detect(nc=nc)
        self._initialize_biases()  # only run once

    def _initialize_biases(self, cf=None):
        m = self.head_self
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            with torch.no_grad():
                b[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)
                b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model_dst = Model(nc=80)
feats = [torch.randn(1, 8, 4, 4), torch.randn(1, 16, 2, 2)]
outs = model_dst.head_self(feats)
loss = sum(o.sigmoid().mean() for o in outs)
loss.backward()
biases = torch.cat([mi.bias for mi in model_dst.head_self.m])

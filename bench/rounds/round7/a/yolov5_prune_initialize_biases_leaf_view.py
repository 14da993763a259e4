# label: hazard raises
# why: _initialize_biases takes b = mi.bias.view(...) and does `b[:, 4] += ...` without torch.no_grad(), an in-place write through a view of a leaf Parameter that requires grad.
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


class Model(nn.Module):
    def __init__(self, nc=80):
        super(Model, self).__init__()
        self.head_self = Detect(nc=nc)
        self._initialize_biases()  # only run once

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        m = self.head_self  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # <-- IPL003: in-place write through a view of the leaf bias
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # <-- IPL003: same
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model_dst = Model(nc=80)
biases = torch.cat([mi.bias for mi in model_dst.head_self.m])

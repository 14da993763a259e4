# label: safe
# why: the detection-head prior bias is written through b.data on a view of a freshly constructed parameter before any forward pass, so no graph can observe the write.
# source: https://github.com/ultralytics/yolov5/blob/master/models/yolo.py
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None

    def __init__(self, nc=2, anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(4, 8)):
        super().__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv

    def forward(self, x):
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, nc=2):
        super().__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(3, 4, 3, 2, 1), nn.Conv2d(4, 8, 3, 2, 1)])
        self.model = nn.ModuleList([Detect(nc)])
        m = self.model[-1]
        m.stride = torch.tensor([2.0, 4.0])
        self._initialize_biases()

    def forward(self, x):
        p3 = self.backbone[0](x)
        p4 = self.backbone[1](p3)
        return self.model[-1]([p3, p4])

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b.data[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)
            b.data[:, 5:5 + m.nc] += math.log(0.6 / (m.nc - 0.99999)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model = Model()
imgs = torch.randn(2, 3, 8, 8)
preds = model(imgs)
loss = sum(p[..., 4].sigmoid().mean() + p[..., :4].pow(2).mean() for p in preds)
loss.backward()

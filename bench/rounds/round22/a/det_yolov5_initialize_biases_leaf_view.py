# label: hazard raises no-twin
# why: Model._initialize_biases takes b = mi.bias.view(na, -1), a view of the Detect conv's bias Parameter (a leaf that requires grad), and adds the prior log-odds with b[:, 4] += ... in grad mode, so PyTorch refuses the in-place write to a view of a leaf ("a view of a leaf Variable that requires grad is being used in an in-place operation").
# source: https://github.com/ultralytics/yolov5/commit/00186d0912665e8adc5930fc1ce7f8e9d285d69d ("leaf Variable inplace bug fix", models/yolo.py)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1):
        super(Conv, self).__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Detect(nn.Module):
    stride = None  # strides computed during build

    def __init__(self, nc=3, anchors=(), ch=()):  # detection layer
        super(Detect, self).__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)  # shape(nl,na,2)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv

    def forward(self, x):
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape  # x(bs,255,20,20) to x(bs,3,20,20,85)
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, ch=3, nc=3):
        super(Model, self).__init__()
        self.backbone = nn.ModuleList([Conv(ch, 8, 3, 2), Conv(8, 16, 3, 2), Conv(16, 16, 3, 2)])
        self.model = nn.ModuleList([Detect(nc=nc, anchors=([10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]), ch=(16, 16))])

        # Build strides, anchors
        m = self.model[-1]  # Detect()
        if isinstance(m, Detect):
            s = 64  # 2x min stride
            m.stride = torch.tensor([s / x.shape[-2] for x in self.forward(torch.zeros(1, ch, s, s))])  # forward
            m.anchors /= m.stride.view(-1, 1, 1)
            self.stride = m.stride
            self._initialize_biases()  # only run once

    def forward(self, x):
        x = self.backbone[0](x)
        p4 = self.backbone[1](x)
        p5 = self.backbone[2](p4)
        return self.model[-1]([p4[:, :16], p5])

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        # https://arxiv.org/abs/1708.02002 section 3.3
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)  # <-- IPL003
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls  # <-- IPL003
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


def main():
    model = Model(ch=3, nc=3)
    imgs = torch.randn(2, 3, 64, 64)
    preds = model(imgs)
    lobj = sum(torch.nn.functional.binary_cross_entropy_with_logits(
        p[..., 4], torch.zeros_like(p[..., 4])) for p in preds)
    lobj.backward()
    return lobj.detach(), model.model[-1].m[0].bias.grad


lobj, grad = main()

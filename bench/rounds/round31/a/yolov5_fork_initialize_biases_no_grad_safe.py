# label: safe
# why: the fix suggested in the issue wraps the prior initialization in `torch.no_grad()`, so writing through the view of the conv bias Parameter is allowed and the re-wrapped Parameter trains normally.
# source: https://github.com/DataXujing/YOLO-v5/issues/23
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def autopad(k, p=None):
    if p is None:
        p = k // 2 if isinstance(k, int) else [x // 2 for x in k]
    return p


class Conv(nn.Module):
    # Standard convolution
    def __init__(self, c1, c2, k=1, s=1, g=1, act=True):
        super(Conv, self).__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, autopad(k), groups=g, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.LeakyReLU(0.1, inplace=True) if act else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Detect(nn.Module):
    def __init__(self, nc=80, anchors=()):  # detection layer
        super(Detect, self).__init__()
        self.stride = None  # strides computed during build
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.grid = [torch.zeros(1)] * self.nl  # init grid
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)  # shape(nl,na,2)
        self.register_buffer('anchor_grid', a.clone().view(self.nl, 1, -1, 1, 1, 2))  # shape(nl,1,na,1,1,2)

    def forward(self, x):
        z = []  # inference output
        for i in range(self.nl):
            bs, _, ny, nx = x[i].shape  # x(bs,255,20,20) to x(bs,3,20,20,85)
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, ch=3, nc=2, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119))):
        super(Model, self).__init__()
        na = len(anchors[0]) // 2
        no = na * (nc + 5)
        # backbone + head, indexed like parse_model(): [from, module]
        self.model = nn.ModuleList([
            Conv(ch, 8, 3, 2),             # 0  P1/2
            Conv(8, 16, 3, 2),             # 1  P2/4
            Conv(16, 16, 3, 2),            # 2  P3/8
            Conv(16, 32, 3, 2),            # 3  P4/16
            nn.Conv2d(16, no, 1),          # 4  from 2
            nn.Conv2d(32, no, 1),          # 5  from 3
            Detect(nc, anchors),           # 6  from [4, 5]
        ])
        froms = [-1, -1, -1, -1, 2, 3, [4, 5]]
        for i, (m, f) in enumerate(zip(self.model, froms)):
            m.i, m.f = i, f
        self.save = [2, 3, 4, 5]

        # Build strides, anchors
        m = self.model[-1]  # Detect()
        m.stride = torch.tensor([64 / x.shape[-2] for x in self.forward(torch.zeros(1, ch, 64, 64))])  # forward
        m.anchors /= m.stride.view(-1, 1, 1)
        self.stride = m.stride

        # Init weights, biases
        self._initialize_biases()  # only run once

    def forward(self, x):
        return self.forward_once(x)

    def forward_once(self, x):
        y = []  # outputs
        for m in self.model:
            if m.f != -1:  # if not from previous layer
                x = y[m.f] if isinstance(m.f, int) else [x if j == -1 else y[j] for j in m.f]  # from earlier layers
            x = m(x)  # run
            y.append(x if m.i in self.save else None)  # save output
        return x

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        m = self.model[-1]  # Detect() module
        for f, s in zip(m.f, m.stride):  # from
            mi = self.model[f % m.i]
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            with torch.no_grad():
                b[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)
                b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


def compute_loss(p, det):
    # objectness + class BCE against empty targets, box regression toward zero (reduced)
    bce = nn.BCEWithLogitsLoss()
    lobj, lcls, lbox = 0.0, 0.0, 0.0
    for pi in p:
        lobj = lobj + bce(pi[..., 4], torch.zeros_like(pi[..., 4]))
        lcls = lcls + bce(pi[..., 5:], torch.zeros_like(pi[..., 5:]))
        lbox = lbox + pi[..., :4].sigmoid().pow(2).mean()
    return lobj + lcls + lbox


def main():
    model = Model()
    imgs = torch.rand(2, 3, 64, 64)
    pred = model(imgs)
    loss = compute_loss(pred, model.model[-1])
    loss.backward()
    return loss.detach(), model.model[4].bias.detach(), model.model[4].bias.grad


loss, obj_bias, bias_grad = main()

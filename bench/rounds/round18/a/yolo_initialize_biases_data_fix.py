# label: safe
# why: the prior is written into bias.data (no autograd history) and the result is wrapped into a fresh Parameter, so the in-place adds never touch a graph.
# source: https://github.com/sovit-123/Traffic-Light-Detection-Using-YOLOv3/issues/4
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class YOLOLayer(nn.Module):
    def __init__(self, anchors, nc, stride):
        super().__init__()
        self.anchors = torch.tensor(anchors, dtype=torch.float32)
        self.na = len(anchors)
        self.nc = nc
        self.no = nc + 5
        self.stride = stride

    def forward(self, p):
        bs, _, ny, nx = p.shape
        return p.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()


def create_modules(nc=2):
    module_list = nn.ModuleList()
    routs = []
    for i, (cin, stride) in enumerate([(3, 8), (3, 16)]):
        modules = nn.Sequential()
        modules.add_module("Conv2d", nn.Conv2d(cin, 3 * (nc + 5), 1, bias=True))
        module_list.append(modules)
        module_list.append(YOLOLayer(anchors=[(10, 13), (16, 30), (33, 23)], nc=nc, stride=stride))
        routs.append(i)
    return module_list


class Darknet(nn.Module):
    def __init__(self, nc=2):
        super().__init__()
        self.module_list = create_modules(nc)
        self.yolo_layers = [1, 3]
        stride = [8, 16]
        for yolo_index, j in enumerate([0, 2]):
            modules = self.module_list[j + 1]
            bias_ = self.module_list[j][0].bias.data  # shape(21,)
            bias = bias_[: modules.no * modules.na].view(modules.na, -1)  # shape(3,7)
            bias[:, 4] += math.log(8 / (640 / stride[yolo_index]) ** 2)  # obj (8 objects per 640 image)
            bias[:, 5:] += math.log(0.6 / (modules.nc - 0.99))  # cls (sigmoid(p) = 1/nc)
            self.module_list[j][0].bias = torch.nn.Parameter(bias.view(-1), requires_grad=bias_.requires_grad)

    def forward(self, x):
        yolo_out = []
        for i in range(0, len(self.module_list), 2):
            yolo_out.append(self.module_list[i + 1](self.module_list[i](x)))
        return yolo_out


model = Darknet(nc=2)
imgs = torch.randn(2, 3, 8, 8)
out = model(imgs)
loss = sum(o[..., 4].sigmoid().mean() + o[..., :4].pow(2).mean() for o in out)
loss.backward()

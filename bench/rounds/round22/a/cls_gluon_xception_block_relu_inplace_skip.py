# label: hazard silent
# why: in the middle-flow Block the identity skip is just an alias of the input (skip = x), and the first op of self.rep is ReLU(inplace=True), so rep rectifies x in place before "self.rep(x) + skip" reads it and the residual branch silently adds relu(x) instead of x (the "silent failure if inplace=True here" the author notes).
# source: https://github.com/huggingface/pytorch-image-models/blob/4d505e0785db1800889d19aa2afa93f79ba93f61/timm/models/gluon_xception.py (Block: "NOTE: silent failure if inplace=True here")
from collections import OrderedDict

import torch
import torch.nn as nn

torch.manual_seed(0)


class SeparableConv2d(nn.Module):
    def __init__(self, inplanes, planes, kernel_size=3, stride=1, dilation=1, bias=False, norm_layer=None):
        super(SeparableConv2d, self).__init__()
        padding = ((stride - 1) + dilation * (kernel_size - 1)) // 2
        # depthwise convolution
        self.conv_dw = nn.Conv2d(
            inplanes, inplanes, kernel_size, stride=stride,
            padding=padding, dilation=dilation, groups=inplanes, bias=bias)
        self.bn = norm_layer(num_features=inplanes)
        # pointwise convolution
        self.conv_pw = nn.Conv2d(inplanes, planes, kernel_size=1, bias=bias)

    def forward(self, x):
        x = self.conv_dw(x)
        x = self.bn(x)
        x = self.conv_pw(x)
        return x


class Block(nn.Module):
    def __init__(self, inplanes, planes, num_reps, stride=1, dilation=1, norm_layer=None,
                 start_with_relu=True, grow_first=True, is_last=False):
        super(Block, self).__init__()
        if planes != inplanes or stride != 1:
            self.skip = nn.Sequential()
            self.skip.add_module('conv1', nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False))
            self.skip.add_module('bn1', norm_layer(num_features=planes))
        else:
            self.skip = None

        rep = OrderedDict()
        l = 1
        filters = inplanes
        if grow_first:
            if start_with_relu:
                rep['act%d' % l] = nn.ReLU(inplace=True)  # <-- IPL002
            rep['conv%d' % l] = SeparableConv2d(inplanes, planes, 3, 1, dilation, norm_layer=norm_layer)
            rep['bn%d' % l] = norm_layer(num_features=planes)
            filters = planes
            l += 1

        for _ in range(num_reps - 1):
            if grow_first or start_with_relu:
                rep['act%d' % l] = nn.ReLU(inplace=grow_first or not start_with_relu)
            rep['conv%d' % l] = SeparableConv2d(filters, filters, 3, 1, dilation, norm_layer=norm_layer)
            rep['bn%d' % l] = norm_layer(num_features=filters)
            l += 1

        if stride != 1:
            rep['act%d' % l] = nn.ReLU(inplace=True)
            rep['conv%d' % l] = SeparableConv2d(planes, planes, 3, stride, norm_layer=norm_layer)
            rep['bn%d' % l] = norm_layer(num_features=planes)
            l += 1
        self.rep = nn.Sequential(rep)

    def forward(self, x):
        skip = x
        if self.skip is not None:
            skip = self.skip(skip)
        x = self.rep(x) + skip
        return x


class Xception65(nn.Module):
    def __init__(self, num_classes=4, in_chans=3, norm_layer=nn.BatchNorm2d):
        super(Xception65, self).__init__()
        self.conv1 = nn.Conv2d(in_chans, 8, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn1 = norm_layer(num_features=8)
        self.relu = nn.ReLU(inplace=True)
        self.block1 = Block(8, 16, num_reps=2, stride=2, norm_layer=norm_layer, start_with_relu=False)
        # Middle flow
        self.mid = nn.Sequential(OrderedDict([('block%d' % i, Block(
            16, 16, num_reps=3, stride=1, norm_layer=norm_layer, start_with_relu=True, grow_first=True))
            for i in range(4, 6)]))
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.block1(x)
        x = self.mid(x)
        x = self.global_pool(x).flatten(1)
        return self.fc(x)


def main():
    model = Xception65()
    x = torch.randn(2, 3, 16, 16)
    target = torch.tensor([1, 3])
    out = model(x)
    loss = nn.functional.cross_entropy(out, target)
    loss.backward()
    return out.detach(), model.conv1.weight.grad.clone()


out, grad = main()

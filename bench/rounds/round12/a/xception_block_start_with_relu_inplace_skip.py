# label: hazard silent
# why: the shared ReLU(inplace=True) that opens Block.rep overwrites the block input, so the identity skip added at the end is relu(inp) instead of inp.
# source: https://github.com/mapillary/inplace_abn/issues/40
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def fixed_padding(inputs, kernel_size, dilation):
    kernel_size_effective = kernel_size + (kernel_size - 1) * (dilation - 1)
    pad_total = kernel_size_effective - 1
    pad_beg = pad_total // 2
    pad_end = pad_total - pad_beg
    return F.pad(inputs, (pad_beg, pad_end, pad_beg, pad_end))


class SeparableConv2d_same(nn.Module):
    def __init__(self, inplanes, planes, kernel_size=3, stride=1, dilation=1, bias=False):
        super(SeparableConv2d_same, self).__init__()
        self.conv1 = nn.Conv2d(inplanes, inplanes, kernel_size, stride, 0, dilation,
                               groups=inplanes, bias=bias)
        self.pointwise = nn.Conv2d(inplanes, planes, 1, 1, 0, 1, 1, bias=bias)

    def forward(self, x):
        x = fixed_padding(x, self.conv1.kernel_size[0], dilation=self.conv1.dilation[0])
        x = self.conv1(x)
        x = self.pointwise(x)
        return x


class Block(nn.Module):
    def __init__(self, inplanes, planes, reps, stride=1, dilation=1, start_with_relu=True, grow_first=True):
        super(Block, self).__init__()

        if planes != inplanes or stride != 1:
            self.skip = nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False)
            self.skipbn = nn.BatchNorm2d(planes)
        else:
            self.skip = None

        self.relu = nn.ReLU(inplace=True)  # <-- IPL002: rep[0] is this in-place ReLU, it clobbers inp which the identity skip reads afterwards
        rep = []

        filters = inplanes
        if grow_first:
            rep.append(self.relu)
            rep.append(SeparableConv2d_same(inplanes, planes, 3, stride=1, dilation=dilation))
            rep.append(nn.BatchNorm2d(planes))
            filters = planes

        for i in range(reps - 1):
            rep.append(self.relu)
            rep.append(SeparableConv2d_same(filters, filters, 3, stride=1, dilation=dilation))
            rep.append(nn.BatchNorm2d(filters))

        if not start_with_relu:
            rep = rep[1:]

        self.rep = nn.Sequential(*rep)

    def forward(self, inp):
        x = self.rep(inp)

        if self.skip is not None:
            skip = self.skip(inp)
            skip = self.skipbn(skip)
        else:
            skip = inp

        x += skip

        return x


class MiddleFlow(nn.Module):
    def __init__(self, planes=8):
        super(MiddleFlow, self).__init__()
        self.conv1 = nn.Conv2d(3, planes, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.block1 = Block(planes, planes, reps=2, start_with_relu=False, grow_first=True)
        self.block2 = Block(planes, planes, reps=2, start_with_relu=True, grow_first=True)

    def forward(self, x):
        x = self.bn1(self.conv1(x))
        x = self.block1(x)
        x = self.block2(x)
        return x


model = MiddleFlow()
model.train()
images = torch.randn(2, 3, 16, 16)
out = model(images)
loss = out.pow(2).mean()
loss.backward()

# label: hazard raises
# why: swapping the order in BasicBlock (ReLU(inplace=True) then `out += identity`) rewrites the ReLU output that ReLU saved for its own backward
# source: https://github.com/pytorch/vision/issues/807 (fmassa's comment on torchvision/models/resnet.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super(BasicBlock, self).__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)
        out = self.relu(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity  # <-- IPL001: `out` is the output the in-place ReLU saved for backward

        return out


layer = nn.Sequential(
    BasicBlock(4, 8, stride=2, downsample=nn.Sequential(conv1x1(4, 8, 2), nn.BatchNorm2d(8))),
    BasicBlock(8, 8),
)
x = torch.randn(2, 4, 8, 8)
out = layer(x)
loss = out.mean()
loss.backward()

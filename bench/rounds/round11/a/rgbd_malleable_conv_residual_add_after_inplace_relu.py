# label: hazard raises
# why: the depth-guided branch output is produced by an in-place ReLU whose result is saved for backward, and `out += pool` then overwrites that saved activation.
# source: https://github.com/charlesCXK/RGBD_Semantic_Segmentation_PyTorch/issues/9
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvBnRelu(nn.Module):
    def __init__(self, in_planes, out_planes, ksize, stride=1, pad=0, has_relu=True, inplace=True):
        super(ConvBnRelu, self).__init__()
        self.conv = nn.Conv2d(in_planes, out_planes, ksize, stride, pad, bias=False)
        self.bn = nn.BatchNorm2d(out_planes)
        self.has_relu = has_relu
        if self.has_relu:
            self.relu = nn.ReLU(inplace=inplace)

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.has_relu:
            x = self.relu(x)
        return x


class GlobalContextHead(nn.Module):
    def __init__(self, in_planes, out_planes):
        super(GlobalContextHead, self).__init__()
        self.context = ConvBnRelu(in_planes, out_planes, 3, 1, 1)
        self.gp_conv = ConvBnRelu(in_planes, out_planes, 1, 1, 0)
        self.head = nn.Conv2d(out_planes, 3, 1)

    def forward(self, x):
        out = self.context(x)
        pool = F.adaptive_avg_pool2d(x, 1)
        pool = self.gp_conv(pool)
        out += pool  # <-- IPL001: in-place add on the output of ReLU(inplace=True), which ReLU saved for backward
        out = F.relu(out, inplace=False)
        return self.head(out)


model = GlobalContextHead(4, 8)
x = torch.randn(2, 4, 6, 6)
target = torch.randint(0, 3, (2, 6, 6))
pred = model(x)
loss = F.cross_entropy(pred, target)
loss.backward()

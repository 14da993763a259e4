# label: safe
# why: in HRModule's fuse loop y aliases the branch output x[0] only for i == 0, where every later term is added out of place; for i > 0 y is a fresh fuse-layer (conv+BN) output, so `y += ...` touches nothing saved
# source: https://github.com/open-mmlab/mmsegmentation/blob/main/mmseg/models/backbones/hrnet.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def resize(input, size=None, mode='nearest', align_corners=None):
    return F.interpolate(input, size, None, mode, align_corners)


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, padding=1, bias=False)
        self.norm1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.norm1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.norm2(out)
        out += identity
        out = self.relu(out)
        return out


class HRModule(nn.Module):
    def __init__(self, num_branches, in_channels):
        super().__init__()
        self.in_channels = in_channels
        self.num_branches = num_branches
        self.branches = nn.ModuleList([BasicBlock(c, c) for c in in_channels])
        self.fuse_layers = self._make_fuse_layers()
        self.relu = nn.ReLU(inplace=False)

    def _make_fuse_layers(self):
        num_branches = self.num_branches
        in_channels = self.in_channels
        fuse_layers = []
        for i in range(num_branches):
            fuse_layer = []
            for j in range(num_branches):
                if j > i:
                    fuse_layer.append(nn.Sequential(
                        nn.Conv2d(in_channels[j], in_channels[i], kernel_size=1, bias=False),
                        nn.BatchNorm2d(in_channels[i]),
                        nn.Upsample(scale_factor=2 ** (j - i), mode='bilinear', align_corners=False)))
                elif j == i:
                    fuse_layer.append(None)
                else:
                    conv_downsamples = []
                    for k in range(i - j):
                        if k == i - j - 1:
                            conv_downsamples.append(nn.Sequential(
                                nn.Conv2d(in_channels[j], in_channels[i], 3, 2, 1, bias=False),
                                nn.BatchNorm2d(in_channels[i])))
                        else:
                            conv_downsamples.append(nn.Sequential(
                                nn.Conv2d(in_channels[j], in_channels[j], 3, 2, 1, bias=False),
                                nn.BatchNorm2d(in_channels[j]),
                                nn.ReLU(inplace=False)))
                    fuse_layer.append(nn.Sequential(*conv_downsamples))
            fuse_layers.append(nn.ModuleList(fuse_layer))
        return nn.ModuleList(fuse_layers)

    def forward(self, x):
        """Forward function."""
        if self.num_branches == 1:
            return [self.branches[0](x[0])]

        for i in range(self.num_branches):
            x[i] = self.branches[i](x[i])

        x_fuse = []
        for i in range(len(self.fuse_layers)):
            y = x[0] if i == 0 else self.fuse_layers[i][0](x[0])
            for j in range(1, self.num_branches):
                if i == j:
                    y += x[j]
                elif j > i:
                    y = y + resize(
                        self.fuse_layers[i][j](x[j]),
                        size=x[i].shape[2:],
                        mode='bilinear',
                        align_corners=False)
                else:
                    y += self.fuse_layers[i][j](x[j])
            x_fuse.append(self.relu(y))
        return x_fuse


stage = nn.ModuleList([HRModule(3, [4, 8, 16]), HRModule(3, [4, 8, 16])])
x = [torch.randn(2, 4, 8, 8), torch.randn(2, 8, 4, 4), torch.randn(2, 16, 2, 2)]
for module in stage:
    x = module(x)
loss = sum(o.pow(2).mean() for o in x)
loss.backward()

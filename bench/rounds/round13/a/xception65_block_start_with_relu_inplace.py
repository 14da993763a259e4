# label: hazard raises
# why: Xception Blocks built with start_with_relu=True put the shared nn.ReLU(True) first in their Sequential, so the block input (the backbone's ReLU output, saved for its backward and also kept as low-level feature / skip) is rectified in place.
# source: https://github.com/Tramac/awesome-semantic-segmentation-pytorch/issues/58
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SeparableConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, dilation=1, bias=False, norm_layer=None):
        super(SeparableConv2d, self).__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.conv1 = nn.Conv2d(in_channels, in_channels, kernel_size, stride, 0, dilation, groups=in_channels, bias=bias)
        self.bn = norm_layer(in_channels)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=bias)

    def forward(self, x):
        x = self.fix_padding(x, self.kernel_size, self.dilation)
        x = self.conv1(x)
        x = self.bn(x)
        x = self.pointwise(x)
        return x

    def fix_padding(self, x, kernel_size, dilation):
        kernel_size_effective = kernel_size + (kernel_size - 1) * (dilation - 1)
        pad_total = kernel_size_effective - 1
        pad_beg = pad_total // 2
        pad_end = pad_total - pad_beg
        padded_inputs = F.pad(x, (pad_beg, pad_end, pad_beg, pad_end))
        return padded_inputs


class Block(nn.Module):
    def __init__(self, in_channels, out_channels, reps, stride=1, dilation=1, norm_layer=None,
                 start_with_relu=True, grow_first=True, is_last=False):
        super(Block, self).__init__()
        if out_channels != in_channels or stride != 1:
            self.skip = nn.Conv2d(in_channels, out_channels, 1, stride, bias=False)
            self.skipbn = norm_layer(out_channels)
        else:
            self.skip = None
        self.relu = nn.ReLU(True)  # <-- IPL001: shared in-place ReLU placed first in the block, it rewrites the block input in place
        rep = list()
        filters = in_channels
        if grow_first:
            if start_with_relu:
                rep.append(self.relu)
            rep.append(SeparableConv2d(in_channels, out_channels, 3, 1, dilation, norm_layer=norm_layer))
            rep.append(norm_layer(out_channels))
            filters = out_channels
        for i in range(reps - 1):
            if grow_first or start_with_relu:
                rep.append(self.relu)
            rep.append(SeparableConv2d(filters, filters, 3, 1, dilation, norm_layer=norm_layer))
            rep.append(norm_layer(filters))
        if stride != 1:
            rep.append(self.relu)
            rep.append(SeparableConv2d(filters, out_channels, 3, stride, norm_layer=norm_layer))
            rep.append(norm_layer(out_channels))
        self.rep = nn.Sequential(*rep)

    def forward(self, x):
        out = self.rep(x)
        if self.skip is not None:
            skip = self.skipbn(self.skip(x))
        else:
            skip = x
        out = out + skip
        return out


class Xception65(nn.Module):
    def __init__(self, num_classes=4, norm_layer=nn.BatchNorm2d):
        super(Xception65, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 2, 1, bias=False)
        self.bn1 = norm_layer(8)
        self.relu = nn.ReLU(True)
        self.conv2 = nn.Conv2d(8, 8, 3, 1, 1, bias=False)
        self.bn2 = norm_layer(8)
        self.block1 = Block(8, 16, reps=2, stride=2, norm_layer=norm_layer, start_with_relu=False)
        self.block2 = Block(16, 16, reps=2, stride=1, norm_layer=norm_layer, start_with_relu=True, grow_first=True)
        self.midflow = nn.Sequential(*[Block(16, 16, reps=3, stride=1, norm_layer=norm_layer, start_with_relu=True) for _ in range(2)])
        self.head = nn.Conv2d(16 + 16, num_classes, 1)

    def forward(self, x):
        size = x.shape[2:]
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.conv2(x)
        x = self.bn2(x)
        x = self.relu(x)
        x = self.block1(x)
        x = self.relu(x)
        c1 = x
        x = self.block2(x)
        x = self.midflow(x)
        x = self.head(torch.cat([x, c1], dim=1))
        return F.interpolate(x, size, mode='bilinear', align_corners=True)


model = Xception65()
images = torch.randn(2, 3, 16, 16)
masks = torch.randint(0, 4, (2, 16, 16))
outputs = model(images)
loss = F.cross_entropy(outputs, masks)
loss.backward()

# label: hazard raises
# why: the unit re-applies its shared in-place ReLU to the identity branch, which is the block input already saved by conv1 (and by the previous unit's ReLU) for backward
# source: https://github.com/osmr/imgclsmob/issues/5
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SqnxtConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding=(0, 0)):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activ = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.activ(self.bn(self.conv(x)))


class SqnxtUnit(nn.Module):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        if stride == 2:
            reduction_den = 1
            self.resize_identity = True
        elif in_channels > out_channels:
            reduction_den = 4
            self.resize_identity = True
        else:
            reduction_den = 2
            self.resize_identity = False
        self.conv1 = SqnxtConv(in_channels, in_channels // reduction_den, 1, stride)
        self.conv2 = SqnxtConv(in_channels // reduction_den, in_channels // (2 * reduction_den), 1, 1)
        self.conv3 = SqnxtConv(in_channels // (2 * reduction_den), in_channels // reduction_den, (1, 3), 1, (0, 1))
        self.conv4 = SqnxtConv(in_channels // reduction_den, in_channels // reduction_den, (3, 1), 1, (1, 0))
        self.conv5 = SqnxtConv(in_channels // reduction_den, out_channels, 1, 1)
        if self.resize_identity:
            self.identity_conv = SqnxtConv(in_channels, out_channels, 1, stride)
        self.activ = nn.ReLU(inplace=True)

    def forward(self, x):
        if self.resize_identity:
            identity = self.identity_conv(x)
        else:
            identity = x
        identity = self.activ(identity)  # <-- IPL001: in-place ReLU on the block input saved by conv1 for backward
        x = self.conv1(x)
        x = self.conv2(x)
        x = self.conv3(x)
        x = self.conv4(x)
        x = self.conv5(x)
        x = x + identity
        x = self.activ(x)
        return x


class SqueezeNext(nn.Module):
    def __init__(self, channels=((8, 8), (16, 16)), init_block_channels=8, num_classes=5):
        super().__init__()
        self.init_block = SqnxtConv(3, init_block_channels, 3, 2, (1, 1))
        self.features = nn.Sequential()
        in_channels = init_block_channels
        for i, channels_per_stage in enumerate(channels):
            stage = nn.Sequential()
            for j, out_channels in enumerate(channels_per_stage):
                stride = 2 if (j == 0) and (i != 0) else 1
                stage.add_module("unit{}".format(j + 1), SqnxtUnit(in_channels, out_channels, stride))
                in_channels = out_channels
            self.features.add_module("stage{}".format(i + 1), stage)
        self.output = nn.Linear(in_channels, num_classes)

    def forward(self, x):
        x = self.init_block(x)
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.output(x)


net = SqueezeNext()
images = torch.randn(2, 3, 16, 16)
labels = torch.tensor([1, 3])
loss = F.cross_entropy(net(images), labels)
loss.backward()

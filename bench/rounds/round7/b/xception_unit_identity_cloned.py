# label: safe
# why: the fixed XceptionUnit takes identity = x.clone() before the body, so the in-place pre-activation ReLUs only touch tensors nothing else reads afterwards.
# source: https://github.com/osmr/imgclsmob/issues/13
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, activate):
        super(ConvBlock, self).__init__()
        self.activate = activate
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(num_features=out_channels)
        if self.activate:
            self.activ = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        if self.activate:
            x = self.activ(x)
        return x


class DwsConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super(DwsConv, self).__init__()
        self.dw_conv = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding,
                                 groups=in_channels, bias=False)
        self.pw_conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x):
        x = self.dw_conv(x)
        x = self.pw_conv(x)
        return x


class DwsConvBlock(nn.Module):
    """Depthwise separable convolution block with batchnorm and ReLU pre-activation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, activate):
        super(DwsConvBlock, self).__init__()
        self.activate = activate
        if self.activate:
            self.activ = nn.ReLU(inplace=True)
        self.conv = DwsConv(in_channels, out_channels, kernel_size, stride, padding)
        self.bn = nn.BatchNorm2d(num_features=out_channels)

    def forward(self, x):
        if self.activate:
            x = self.activ(x)
        x = self.conv(x)
        x = self.bn(x)
        return x


class XceptionUnit(nn.Module):
    def __init__(self, in_channels, out_channels, stride, reps, start_with_relu=True, grow_first=True):
        super(XceptionUnit, self).__init__()
        self.resize_identity = (in_channels != out_channels) or (stride != 1)
        if self.resize_identity:
            self.identity_conv = ConvBlock(in_channels, out_channels, 1, stride, 0, activate=False)
        self.body = nn.Sequential()
        for i in range(reps):
            if (grow_first and (i == 0)) or ((not grow_first) and (i == reps - 1)):
                in_channels_i, out_channels_i = in_channels, out_channels
            elif grow_first:
                in_channels_i, out_channels_i = out_channels, out_channels
            else:
                in_channels_i, out_channels_i = in_channels, in_channels
            activate = start_with_relu if (i == 0) else True
            self.body.add_module("block{}".format(i + 1), DwsConvBlock(
                in_channels_i, out_channels_i, 3, 1, 1, activate=activate))
        if stride != 1:
            self.body.add_module("pool", nn.MaxPool2d(kernel_size=3, stride=stride, padding=1))

    def forward(self, x):
        if self.resize_identity:
            identity = self.identity_conv(x)
        else:
            identity = x.clone()
        x = self.body(x)
        x = x + identity
        return x


class Xception(nn.Module):
    def __init__(self, channels, in_channels=3, num_classes=10):
        super(Xception, self).__init__()
        self.features = nn.Sequential()
        self.features.add_module("init_block", ConvBlock(in_channels, 8, 3, 2, 0, activate=True))
        in_channels = 8
        for i, channels_per_stage in enumerate(channels):
            stage = nn.Sequential()
            for j, out_channels in enumerate(channels_per_stage):
                stage.add_module("unit{}".format(j + 1), XceptionUnit(
                    in_channels=in_channels,
                    out_channels=out_channels,
                    stride=(2 if (j == 0) else 1),
                    reps=(2 if (j == 0) else 3),
                    start_with_relu=((i != 0) or (j != 0)),
                    grow_first=((i != len(channels) - 1) or (j != len(channels_per_stage) - 1))))
                in_channels = out_channels
            self.features.add_module("stage{}".format(i + 1), stage)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.output = nn.Linear(in_features=in_channels, out_features=num_classes)

    def forward(self, x):
        x = self.pool(self.features(x))
        x = x.view(x.size(0), -1)
        return self.output(x)


net = Xception(channels=[[16, 16, 16]])
x = torch.randn(2, 3, 17, 17)
y = net(x)
loss = nn.functional.cross_entropy(y, torch.tensor([1, 7]))
loss.backward()

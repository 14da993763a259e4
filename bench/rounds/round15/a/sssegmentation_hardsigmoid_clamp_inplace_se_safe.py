# label: safe
# why: sssegmentation's HardSigmoid clamps (x + bias) / divisor in place; that quotient is a fresh tensor no backward node saved (division by a Python scalar saves nothing), so the SE gate and MobileNetV3 gradients are unchanged.
# source: https://github.com/SegmentationBLWX/sssegmentation/issues/26
import torch
import torch.nn as nn

torch.manual_seed(0)


class HardSigmoid(nn.Module):
    def __init__(self, bias=1.0, divisor=2.0, min_value=0.0, max_value=1.0):
        super(HardSigmoid, self).__init__()
        assert divisor != 0, 'divisor is not allowed to be equal to zero'
        self.bias = bias
        self.divisor = divisor
        self.min_value = min_value
        self.max_value = max_value

    def forward(self, x):
        x = (x + self.bias) / self.divisor
        return x.clamp_(self.min_value, self.max_value)


class HardSwish(nn.Module):
    def forward(self, x):
        return x * nn.functional.relu6(x + 3) / 6


class SqueezeExcitationConv2d(nn.Module):
    def __init__(self, channels, ratio=4, act_cfgs=None):
        super().__init__()
        self.global_avgpool = nn.AdaptiveAvgPool2d(1)
        self.conv1 = nn.Sequential(nn.Conv2d(channels, channels // ratio, 1), nn.ReLU(inplace=True))
        self.conv2 = nn.Sequential(nn.Conv2d(channels // ratio, channels, 1), HardSigmoid(bias=3.0, divisor=6.0))

    def forward(self, x):
        out = self.global_avgpool(x)
        out = self.conv1(out)
        out = self.conv2(out)
        return x * out


class InvertedResidualV3(nn.Module):
    def __init__(self, in_channels, out_channels, mid_channels, kernel_size=3, stride=1, se_cfg=True):
        super().__init__()
        self.with_res_shortcut = (stride == 1 and in_channels == out_channels)
        self.expand_conv = nn.Sequential(nn.Conv2d(in_channels, mid_channels, 1, bias=False), nn.BatchNorm2d(mid_channels), HardSwish())
        self.depthwise_conv = nn.Sequential(
            nn.Conv2d(mid_channels, mid_channels, kernel_size, stride, kernel_size // 2, groups=mid_channels, bias=False),
            nn.BatchNorm2d(mid_channels), HardSwish())
        self.se = SqueezeExcitationConv2d(mid_channels) if se_cfg else None
        self.linear_conv = nn.Sequential(nn.Conv2d(mid_channels, out_channels, 1, bias=False), nn.BatchNorm2d(out_channels))

    def forward(self, x):
        out = self.expand_conv(x)
        out = self.depthwise_conv(out)
        if self.se is not None:
            out = self.se(out)
        out = self.linear_conv(out)
        if self.with_res_shortcut:
            return x + out
        return out


model = nn.Sequential(
    nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), HardSwish(),
    InvertedResidualV3(8, 8, 16),
    InvertedResidualV3(8, 8, 24, kernel_size=5),
    nn.Conv2d(8, 3, 1),
)
images = torch.randn(2, 3, 12, 12)
targets = torch.randint(0, 3, (2, 6, 6))
preds = model(images)
loss = nn.functional.cross_entropy(preds, targets)
loss.backward()

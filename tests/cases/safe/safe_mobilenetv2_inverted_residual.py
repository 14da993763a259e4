# label: safe
# why: MobileNetV2 ConvBNReLU uses ReLU6(inplace=True) right after BatchNorm; the residual is an out-of-place `x + self.conv(x)`, so no saved tensor is touched.
import torch
from torch import nn


def _make_divisible(v, divisor, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class ConvBNReLU(nn.Sequential):
    def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1):
        padding = (kernel_size - 1) // 2
        super().__init__(
            nn.Conv2d(in_planes, out_planes, kernel_size, stride, padding, groups=groups, bias=False),
            nn.BatchNorm2d(out_planes),
            nn.ReLU6(inplace=True),
        )


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1))
        layers.extend([
            ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            nn.BatchNorm2d(oup),
        ])
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


torch.manual_seed(0)
c = _make_divisible(8, 8)
features = nn.Sequential(
    ConvBNReLU(3, c, stride=2),
    InvertedResidual(c, c, 1, 1),
    InvertedResidual(c, 16, 2, 6),
    InvertedResidual(16, 16, 1, 6),
)
classifier = nn.Sequential(nn.Dropout(0.0), nn.Linear(16, 3))

imgs = torch.randn(2, 3, 16, 16)
x = features(imgs)
x = nn.functional.adaptive_avg_pool2d(x, 1).reshape(x.shape[0], -1)
scores = classifier(x)
loss = (scores ** 2).mean()
loss.backward()

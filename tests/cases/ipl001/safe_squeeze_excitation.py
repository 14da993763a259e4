# label: safe
# why: SE block returns `x * self.se(x)` (out of place); the inplace ReLU inside the excitation MLP follows a 1x1 conv
import torch
import torch.nn as nn

torch.manual_seed(0)


class SqueezeExcite(nn.Module):
    def __init__(self, channels, reduction=2):
        super().__init__()
        self.se = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(channels, channels // reduction, 1),
            nn.ReLU(inplace=True),
            nn.Conv2d(channels // reduction, channels, 1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return x * self.se(x)


class SEConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.se = SqueezeExcite(8)

    def forward(self, x):
        return self.se(self.relu(self.bn(self.conv(x))))


model = SEConvBlock()
x = torch.randn(2, 3, 5, 5)
y = model(x)
loss = y.pow(2).mean()
loss.backward()

# label: safe
# why: the caller halves a new tensor instead of the one the wrapper's convolution saved.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.conv(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 1)
        self.block = ConvBlock(4)

    def forward(self, img):
        feat = self.stem(img)
        out = self.block(feat)
        feat = feat * 0.5
        feat.clamp_(-1, 1)
        return out + feat


net = Net()
y = net(torch.randn(1, 3, 6, 6))
y.sum().backward()

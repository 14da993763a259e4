# label: hazard raises
# why: the wrapper module's first layer is a convolution, which saves the tensor the wrapper is given; the caller scales that tensor in place after the call, so backward finds it at a newer version.
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
        feat.mul_(0.5)  # <-- IPL001: ConvBlock's convolution saved feat
        return out + feat


net = Net()
y = net(torch.randn(1, 3, 6, 6))
y.sum().backward()

# label: safe
# why: torchvision-style block: ReLU(inplace=True) after BatchNorm and `out += identity` on a BatchNorm output are fine because BatchNorm does not save its output.
import torch
from torch import nn

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out += identity
        out = self.relu(out)
        return out


stem = nn.Conv2d(3, 4, 3, padding=1)
block = BasicBlock(4)
images = torch.randn(2, 3, 8, 8)
features = block(stem(images))
loss = features.pow(2).mean()
loss.backward()

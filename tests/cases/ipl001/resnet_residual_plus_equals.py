# label: hazard raises
# why: the residual `out += identity` overwrites the output of F.relu, which relu saved for its backward.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        identity = x
        out = F.relu(self.bn1(self.conv1(x)))
        # user moved the activation before the skip connection
        out = F.relu(self.bn2(self.conv2(out)))
        out += identity  # <-- IPL001: relu output was saved for backward
        return out


block = BasicBlock(4)
images = torch.randn(2, 4, 8, 8)
features = block(images)
loss = features.pow(2).mean()
loss.backward()

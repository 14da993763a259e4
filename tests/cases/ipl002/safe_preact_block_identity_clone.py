# label: safe
# why: identity is a clone taken before x.relu_(), so the shortcut keeps the raw input and the in-place activation only affects x.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PreActBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)

    def forward(self, x):
        identity = x.clone()
        x.relu_()
        out = self.conv1(x)
        out = self.conv2(F.relu(self.bn2(out)))
        return out + identity


stem = nn.Conv2d(3, 4, 3, padding=1)
block = PreActBlock(4)
images = torch.randn(2, 3, 6, 6)
features = block(stem(images))
features.pow(2).mean().backward()

# label: safe
# why: `out += identity` writes into out after its last read, identity is a different tensor, and ReLU(inplace=True) only touches fresh BatchNorm outputs.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        out = self.relu(out)
        return out


stem = nn.Conv2d(3, 4, 3, padding=1)
blocks = nn.Sequential(BasicBlock(4), BasicBlock(4))
images = torch.randn(2, 3, 6, 6)
features = blocks(stem(images))
features.mean().backward()

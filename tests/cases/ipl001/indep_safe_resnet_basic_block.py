# label: safe
# why: conv and BatchNorm do not save their outputs, so ReLU(inplace=True) after bn is fine, and `out += identity` comes after the last read of out.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

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
img = torch.randn(2, 3, 8, 8)
y = block(stem(img))
loss = y.mean()
loss.backward()

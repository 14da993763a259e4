# label: hazard silent
# why: shortcut aliases x, so the in-place ReLU also rectifies the identity branch that is added back later.
import torch
import torch.nn as nn
import torch.nn.functional as F


class PreActBlock(nn.Module):
    """Pre-activation residual block (He et al. 2016), identity shortcut."""

    def __init__(self, channels):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)

    def forward(self, x):
        shortcut = x
        x = self.bn1(x)
        x = F.relu(x, inplace=True)
        out = self.conv1(x)
        out = self.conv2(F.relu(self.bn2(out)))
        return out + shortcut


class PreActNet(nn.Module):
    def __init__(self, channels=4, num_classes=3):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1, bias=False)
        self.block = PreActBlock(channels)
        self.head = nn.Linear(channels, num_classes)

    def forward(self, x):
        x = self.stem(x)
        shortcut = x
        x.relu_()  # <-- IPL002
        x = self.block(x) + shortcut
        return self.head(x.mean(dim=(2, 3)))


torch.manual_seed(0)
model = PreActNet()
images = torch.randn(2, 3, 6, 6)
out = model(images)
loss = out.square().sum()
loss.backward()

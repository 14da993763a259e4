# label: safe
# why: torchvision-style BasicBlock: the in-place ReLUs act on BatchNorm outputs and on the residual sum, none of which is saved for backward or read again.
import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


torch.manual_seed(0)
down = nn.Sequential(nn.Conv2d(4, 8, 1, stride=2, bias=False), nn.BatchNorm2d(8))
model = nn.Sequential(
    nn.Conv2d(3, 4, 3, padding=1, bias=False),
    nn.BatchNorm2d(4),
    nn.ReLU(inplace=True),
    BasicBlock(4, 4),
    BasicBlock(4, 8, stride=2, downsample=down),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(8, 3),
)
images = torch.randn(2, 3, 8, 8)
out = model(images)
loss = out.logsumexp(dim=1).mean()
loss.backward()

# label: hazard raises
# why: `out += identity` now runs after self.relu, whose output ReLU saved for backward; the in-place add bumps its version
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out = self.relu(out)
        out += identity  # <-- IPL001
        return out


stem = nn.Sequential(
    nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False),
    nn.BatchNorm2d(8),
    nn.ReLU(inplace=True),
)
block = BasicBlock(8, 8)
fc = nn.Linear(8, 5)

images = torch.randn(2, 3, 8, 8)
labels = torch.tensor([1, 3])
feats = block(stem(images))
logits = fc(F.adaptive_avg_pool2d(feats, 1).flatten(1))
loss = F.cross_entropy(logits, labels)
loss.backward()
conv1_grad = block.conv1.weight.grad
stem_grad = stem[0].weight.grad

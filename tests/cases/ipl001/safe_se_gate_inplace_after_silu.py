# label: safe
# why: same in-place SE gating, but on the output of a non-inplace SiLU (which saves its input, not its output); mul_ keeps its own copy of x for the gate's gradient
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SEConv(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c, 1), nn.Sigmoid())

    def forward(self, img):
        x = F.silu(self.conv(img))
        x.mul_(self.se(x))
        return x


model = SEConv(4)
img = torch.randn(2, 3, 5, 5)
out = model(img)
loss = out.mean()
loss.backward()

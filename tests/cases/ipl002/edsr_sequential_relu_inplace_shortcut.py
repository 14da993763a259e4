# label: hazard silent
# why: the body starts with ReLU(inplace=True), which overwrites the block input that `identity` still points to, so the residual adds relu(x).
import torch
import torch.nn as nn

torch.manual_seed(0)


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(nn.ReLU(inplace=True), nn.Conv2d(c, c, 3, padding=1))
        self.scale = 0.1

    def forward(self, x):
        identity = x
        out = self.body(x)  # <-- IPL002: the body's first layer rewrites the block input
        return identity + self.scale * out


head = nn.Conv2d(3, 6, 3, padding=1)
block = ResBlock(6)
tail = nn.Conv2d(6, 3, 3, padding=1)
lr = torch.randn(1, 3, 6, 6)
sr = tail(block(head(lr)))
sr.abs().mean().backward()

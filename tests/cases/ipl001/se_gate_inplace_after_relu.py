# label: hazard raises
# why: the SE gate is applied with x.mul_ to the output of an inplace ReLU; ReluBackward saved that output, so the in-place gating breaks backward
import torch
import torch.nn as nn

torch.manual_seed(0)


class SEConv(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c, 1), nn.Sigmoid())

    def forward(self, img):
        x = self.relu(self.conv(img))
        x.mul_(self.se(x))  # <-- IPL001
        return x


model = SEConv(4)
img = torch.randn(2, 3, 5, 5)
out = model(img)
loss = out.mean()
loss.backward()

# label: hazard silent
# why: shortcut = x is an alias; the inplace ReLU module then rewrites x, so the residual branch adds relu(x) instead of x
import torch
import torch.nn as nn

torch.manual_seed(0)


class PreActBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        shortcut = x
        x = self.relu(x)  # <-- IPL002
        return self.conv(x) + shortcut


stem = nn.Conv2d(3, 4, 3, padding=1)
block = PreActBlock(4)
images = torch.randn(2, 3, 5, 5)
out = block(stem(images))
loss = out.sum()
loss.backward()

# label: hazard raises
# why: the 1x1 shortcut conv saves the block input x for its weight gradient, and the pre-activation ReLU(inplace=True) then overwrites x, so backward raises.
import torch
import torch.nn as nn

torch.manual_seed(0)


class PreActBlock(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.shortcut = nn.Conv2d(c_in, c_out, 1, bias=False)
        self.relu = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1, bias=False)

    def forward(self, x):
        shortcut = self.shortcut(x)
        out = self.relu(x)  # <-- IPL001
        out = self.conv1(out)
        out = self.conv2(torch.relu(self.bn2(out)))
        return out + shortcut


stem = nn.Conv2d(1, 2, 3, padding=1)
block = PreActBlock(2, 3)
img = torch.randn(2, 1, 4, 4)

x = stem(img)
out = block(x)
loss = out.pow(2).mean()
loss.backward()

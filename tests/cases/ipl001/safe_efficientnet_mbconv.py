# label: safe
# why: EfficientNet MBConv: SiLU(inplace) after BN, SE gating out of place, and `result += x` on the final BN output (BN saves its input, not its output)
import torch
import torch.nn as nn

torch.manual_seed(0)


class SE(nn.Module):
    def __init__(self, channels, squeeze):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)
        self.act = nn.SiLU(inplace=True)

    def forward(self, x):
        scale = x.mean((2, 3), keepdim=True)
        scale = torch.sigmoid(self.fc2(self.act(self.fc1(scale))))
        return x * scale


class MBConv(nn.Module):
    def __init__(self, channels, expand=4):
        super().__init__()
        hidden = channels * expand
        self.expand = nn.Sequential(nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.SiLU(inplace=True))
        self.depthwise = nn.Sequential(
            nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.SiLU(inplace=True),
        )
        self.se = SE(hidden, 2)
        self.project = nn.Sequential(nn.Conv2d(hidden, channels, 1, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x):
        result = self.project(self.se(self.depthwise(self.expand(x))))
        result += x
        return result


block = MBConv(4)
x = torch.randn(2, 4, 6, 6, requires_grad=True)
out = block(x)
loss = out.square().mean()
loss.backward()

# label: hazard raises
# why: a WaveNet gated activation multiplies the sigmoid gate into the tanh output in place, but tanh saved that output for its backward.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualLayer(nn.Module):
    def __init__(self, residual_channels, gate_channels, skip_channels, dilation):
        super().__init__()
        self.dilated = nn.Conv1d(residual_channels, gate_channels, 3, padding=dilation, dilation=dilation)
        self.res = nn.Conv1d(gate_channels // 2, residual_channels, 1)
        self.skip = nn.Conv1d(gate_channels // 2, skip_channels, 1)

    def forward(self, x):
        xa, xb = self.dilated(x).chunk(2, dim=1)
        t = torch.tanh(xa)
        s = torch.sigmoid(xb)
        t.mul_(s)  # <-- IPL001: tanh saved `t` for its backward
        skip = self.skip(t)
        out = (self.res(t) + x) * 0.7071
        return out, skip


class WaveNet(nn.Module):
    def __init__(self, layers=3, residual_channels=4, gate_channels=8, skip_channels=4):
        super().__init__()
        self.first = nn.Conv1d(1, residual_channels, 1)
        self.layers = nn.ModuleList(
            [ResidualLayer(residual_channels, gate_channels, skip_channels, 2 ** i) for i in range(layers)]
        )
        self.last = nn.Sequential(nn.ReLU(inplace=True), nn.Conv1d(skip_channels, 1, 1))

    def forward(self, x):
        x = self.first(x)
        skips = 0
        for layer in self.layers:
            x, h = layer(x)
            skips = skips + h
        return self.last(skips)


torch.manual_seed(0)
model = WaveNet()
audio = torch.randn(2, 1, 16)
pred = model(audio)
loss = F.l1_loss(pred, audio)
loss.backward()

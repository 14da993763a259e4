"""Residual blocks: where ``nn.ReLU(inplace=True)`` is fine and where it is not.

``BasicBlock`` and ``Bottleneck`` follow the familiar conv -> bn -> ReLU(inplace=True) layout
with ``out += identity`` *before* the last activation. Batch norm does not keep its output for
backward and the sum does not keep its inputs, so every in-place step there is safe.

``FusedResidualBlock`` moves the activation in front of the residual sum. ReLU keeps its own
output to compute its gradient, so adding the shortcut into that output in place breaks backward.

``SpatialGateNet`` puts an in-place ReLU right after a Sigmoid inside ``nn.Sequential``; the
Sigmoid also keeps its output for backward, so the ReLU overwrites a saved tensor.

Run ``python examples/resnet_blocks.py`` to see which blocks survive ``loss.backward()``.
"""

from __future__ import annotations

import torch
from torch import nn


def conv3x3(in_ch: int, out_ch: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_ch, out_ch, kernel_size=3, stride=stride, padding=1, bias=False)


def conv1x1(in_ch: int, out_ch: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_ch, out_ch, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with an identity (or projected) shortcut. Safe."""

    def __init__(self, in_ch: int, out_ch: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = conv3x3(in_ch, out_ch, stride)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(out_ch, out_ch)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.downsample: nn.Module | None = None
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(conv1x1(in_ch, out_ch, stride), nn.BatchNorm2d(out_ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)  # safe: the batch-norm output is not saved for backward
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity  # safe: still the batch-norm output, nothing saved it
        out = self.relu(out)  # safe: the sum does not keep its result
        return out


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3, 1x1 expand, with the residual added before the last ReLU. Safe."""

    expansion = 4

    def __init__(self, in_ch: int, width: int, stride: int = 1) -> None:
        super().__init__()
        out_ch = width * self.expansion
        self.conv1 = conv1x1(in_ch, width)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = conv3x3(width, width, stride)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = conv1x1(width, out_ch)
        self.bn3 = nn.BatchNorm2d(out_ch)
        self.relu = nn.ReLU(inplace=True)
        self.downsample: nn.Module | None = None
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(conv1x1(in_ch, out_ch, stride), nn.BatchNorm2d(out_ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += identity
        return self.relu(out)


class FusedResidualBlock(nn.Module):
    """A block that activates each branch before summing. HAZARD: ``+=`` into a ReLU output."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = conv3x3(channels, channels)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = conv3x3(channels, channels)
        self.bn2 = nn.BatchNorm2d(channels)
        self.shortcut = nn.Sequential(conv1x1(channels, channels), nn.BatchNorm2d(channels))
        self.act = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = self.shortcut(x)
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.act(x)  # safe: overwrites the batch-norm output
        x = self.conv2(x)
        x = self.bn2(x)
        x = self.act(x)  # ReLU keeps this result to compute its gradient ...
        x += shortcut  # <-- IPL001
        return x


class SpatialGateNet(nn.Module):
    """A tiny stem plus a spatial attention gate. HAZARD: in-place ReLU after Sigmoid."""

    def __init__(self, channels: int = 8) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(channels),
            nn.ReLU(inplace=True),  # safe: batch norm does not keep its output
        )
        self.gate = nn.Sequential(
            nn.Conv2d(channels, 1, kernel_size=1),
            nn.Sigmoid(),
            nn.ReLU(inplace=True),  # <-- IPL001
        )
        self.head = nn.Linear(channels, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        feats = self.stem(x)
        feats = feats * self.gate(feats)
        return self.head(feats.mean(dim=(2, 3)))


def _try_backward(name: str, model: nn.Module, x: torch.Tensor) -> None:
    model.train()
    try:
        model(x).sum().backward()
    except RuntimeError as err:
        reason = str(err).split(" Hint:")[0]
        print(f"{name:<20} backward FAILED:\n    {reason}")
    else:
        print(f"{name:<20} backward ok")


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 16, 8, 8)
    _try_backward("BasicBlock", nn.Sequential(BasicBlock(16, 16), BasicBlock(16, 32, 2)), x)
    _try_backward("Bottleneck", nn.Sequential(Bottleneck(16, 4), Bottleneck(16, 8, 2)), x)
    _try_backward("FusedResidualBlock", FusedResidualBlock(16), x)
    _try_backward("SpatialGateNet", SpatialGateNet(), torch.randn(2, 3, 8, 8))


if __name__ == "__main__":
    main()

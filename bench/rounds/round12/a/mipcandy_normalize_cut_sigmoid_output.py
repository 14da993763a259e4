# label: hazard raises
# why: Normalize(method="cut") clips its input with boolean-index writes, and here the input is the sigmoid output that SigmoidBackward saved for backward.
# source: https://github.com/ProjectNeura/MIPCandy/issues/156
from typing import Literal

import torch
from torch import nn

torch.manual_seed(0)


class Normalize(nn.Module):
    def __init__(self, *, domain: tuple = (0, None), strict: bool = False,
                 method: Literal["linear", "intercept", "cut"] = "linear") -> None:
        super().__init__()
        self._domain = domain
        self._strict: bool = strict
        self._method = method

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        left, right = self._domain
        if left is None and right is None:
            return x
        r_l, r_r = x.min(), x.max()
        match self._method:
            case "linear":
                if left is None or (left < r_l and not self._strict):
                    left = r_l
                if right is None or (right > r_r and not self._strict):
                    right = r_r
                numerator = right - left
                if numerator == 0:
                    numerator = 1
                denominator = r_r - r_l
                if denominator == 0:
                    denominator = 1
                return (x - r_l) * numerator / denominator + left
            case "intercept":
                if left is not None and right is None:
                    return x - r_l + left if r_l < left or self._strict else x
                elif left is None and right is not None:
                    return x - r_r + right if r_r > right or self._strict else x
                else:
                    raise ValueError("Cannot use intercept normalization when both ends are fixed")
            case "cut":
                if self._strict:
                    raise ValueError("Method \"cut\" cannot be strict")
                if left is not None:
                    x[x < left] = left  # <-- IPL001: x is the sigmoid output saved by SigmoidBackward
                if right is not None:
                    x[x > right] = right  # <-- IPL001: second clip write bumps the saved sigmoid output again
                return x


class UNetLite(nn.Module):
    def __init__(self, in_ch: int = 1, num_classes: int = 1) -> None:
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(in_ch, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.down = nn.MaxPool2d(2)
        self.mid = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.head = nn.Conv2d(16, num_classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = self.enc(x)
        m = self.up(self.mid(self.down(e)))
        return self.head(torch.cat([e, m], dim=1))


class SegmentationTrainer(object):
    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        self.clip = Normalize(domain=(1e-3, 1 - 1e-3), method="cut")

    def backward(self, images: torch.Tensor, labels: torch.Tensor) -> tuple:
        logits = self.model(images)
        probs = self.clip(logits.sigmoid())
        loss = -(labels * probs.log() + (1 - labels) * (1 - probs).log()).mean()
        loss.backward()
        return probs, loss

    def train_batch(self, images: torch.Tensor, labels: torch.Tensor) -> dict:
        self.optimizer.zero_grad()
        probs, loss = self.backward(images, labels)
        self.optimizer.step()
        return {"loss": loss.detach(), "probs": probs.detach()}


model = UNetLite()
trainer = SegmentationTrainer(model)
images = torch.randn(2, 1, 8, 8) * 4
labels = (torch.rand(2, 1, 8, 8) > 0.5).float()
metrics = trainer.train_batch(images, labels)

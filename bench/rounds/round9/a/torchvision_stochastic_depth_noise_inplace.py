# label: safe
# why: stochastic_depth draws a noise tensor and edits only that tensor in place (bernoulli_/div_) before multiplying, so no autograd-saved value is touched
# source: https://github.com/pytorch/vision/blob/main/torchvision/ops/stochastic_depth.py
import torch
from torch import nn, Tensor

torch.manual_seed(0)


def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ["batch", "row"]:
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input

    survival_rate = 1.0 - p
    if mode == "row":
        size = [input.shape[0]] + [1] * (input.ndim - 1)
    else:
        size = [1] * input.ndim
    noise = torch.empty(size, dtype=input.dtype, device=input.device)
    noise = noise.bernoulli_(survival_rate)
    if survival_rate > 0.0:
        noise.div_(survival_rate)
    return input * noise


class StochasticDepth(nn.Module):
    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input: Tensor) -> Tensor:
        return stochastic_depth(input, self.p, self.mode, self.training)


class MBConv(nn.Module):
    def __init__(self, channels, stochastic_depth_prob):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False),
            nn.BatchNorm2d(channels),
            nn.SiLU(inplace=True),
            nn.Conv2d(channels, channels, 1, bias=False),
            nn.BatchNorm2d(channels),
        )
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, input: Tensor) -> Tensor:
        result = self.block(input)
        result = self.stochastic_depth(result)
        result += input
        return result


features = nn.Sequential(MBConv(4, 0.1), MBConv(4, 0.2))
features.train()
images = torch.randn(3, 4, 6, 6, requires_grad=True)
out = features(images)
loss = out.square().mean()
loss.backward()

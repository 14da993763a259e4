"""Asking autograd for a gradient with respect to a tensor that was just changed in place.

An in-place op does not make a new tensor: it re-points the *same* tensor at the op's output
in the graph. ``torch.autograd.grad(F.relu_(h).sum(), h)`` therefore differentiates the sum
with respect to the ReLU *output* and returns all ones, never the ReLU's 0/1 mask. No error,
just a wrong answer.

The file also shows ReLU written as ``clamp_(min=0)``, which disagrees with ReLU exactly where
the input is zero (clamp lets the gradient through, ReLU blocks it), and a WGAN-GP gradient
penalty plus an input-saliency map whose underscore methods (``requires_grad_``, ``zero_``) are
all harmless.

Run ``python examples/gradients.py``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def relu_mask_buggy(h: torch.Tensor) -> torch.Tensor:
    """Meant to return d sum(relu(h)) / dh, i.e. the 0/1 mask. HAZARD: returns ones."""
    (grad,) = torch.autograd.grad(F.relu_(h).sum(), h)  # <-- IPL006
    return grad


def relu_mask(h: torch.Tensor) -> torch.Tensor:
    """The same derivative, computed on an out-of-place ReLU. Safe."""
    (grad,) = torch.autograd.grad(F.relu(h).sum(), h)
    return grad


def tanh_slope_buggy(z: torch.Tensor) -> torch.Tensor:
    """Meant to return 1 - tanh(z)**2. HAZARD: ``z`` is the tanh output by the time we ask."""
    z.tanh_()  # <-- IPL006
    (slope,) = torch.autograd.grad(z.sum(), z)
    return slope


def tanh_slope(z: torch.Tensor) -> torch.Tensor:
    """Safe: the activation gets a name of its own."""
    act = torch.tanh(z)
    (slope,) = torch.autograd.grad(act.sum(), z)
    return slope


class NonNegativeEncoder(nn.Module):
    """A sparse-coding encoder whose codes must be non-negative."""

    def __init__(self, dim: int, codes: int, use_clamp: bool = True) -> None:
        super().__init__()
        self.encode = nn.Linear(dim, codes, bias=False)
        self.decode = nn.Linear(codes, dim, bias=False)
        self.use_clamp = use_clamp

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        codes = self.encode(x)
        if self.use_clamp:
            codes.clamp_(min=0)  # <-- IPL008
        else:
            codes = F.relu(codes)
        return self.decode(codes.clamp(-4.0, 4.0))  # safe: a bounded clamp, not a ReLU


def gradient_penalty(critic: nn.Module, real: torch.Tensor, fake: torch.Tensor) -> torch.Tensor:
    """WGAN-GP penalty on points between real and fake samples. Safe."""
    alpha = torch.rand(real.size(0), 1)
    mixed = (alpha * real + (1 - alpha) * fake.detach()).requires_grad_(True)
    scores = critic(mixed)
    (grad,) = torch.autograd.grad(scores.sum(), mixed, create_graph=True)
    return ((grad.norm(2, dim=1) - 1) ** 2).mean()


def saliency(model: nn.Module, x: torch.Tensor, target: int) -> torch.Tensor:
    """|d score / d input| for one class. Safe: ``requires_grad_`` and ``zero_`` touch no graph."""
    x = x.clone().requires_grad_()
    model(x)[:, target].sum().backward()
    result = x.grad.abs()
    x.grad.zero_()
    return result


def main() -> None:
    torch.manual_seed(0)
    base = torch.randn(6, requires_grad=True)
    print("h                        :", base.detach())
    print("relu_mask      (expected):", relu_mask(base * 1.0))
    print("relu_mask_buggy          :", relu_mask_buggy(base * 1.0), "<- wrong")
    print("tanh_slope     (expected):", tanh_slope(base * 1.0))
    print("tanh_slope_buggy         :", tanh_slope_buggy(base * 1.0), "<- wrong")

    clamp_enc = NonNegativeEncoder(4, 3)
    relu_enc = NonNegativeEncoder(4, 3, use_clamp=False)
    relu_enc.load_state_dict(clamp_enc.state_dict())
    x = torch.zeros(2, 4, requires_grad=True)  # e.g. a zero-padded frame: pre-activations are 0
    relu_enc(x).sum().backward()
    relu_grad = x.grad.clone()
    x.grad = None
    clamp_enc(x).sum().backward()
    print("input grad through ReLU    :", relu_grad[0])
    print("input grad through clamp_  :", x.grad[0], "<- gradient leaks through the zeros")

    critic = nn.Sequential(nn.Linear(2, 16), nn.ReLU(inplace=True), nn.Linear(16, 1))
    penalty = gradient_penalty(critic, torch.randn(8, 2), torch.randn(8, 2))
    penalty.backward()
    print(f"gradient penalty {penalty.item():.4f}, backward ok")
    print("saliency:", saliency(critic, torch.randn(1, 2), 0))


if __name__ == "__main__":
    main()

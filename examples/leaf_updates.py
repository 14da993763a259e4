"""Updating parameters (leaf tensors that require grad) in place.

Autograd refuses an in-place op on a leaf that requires grad while grad mode is on: it would
have to record the update as part of the next graph. Hand-written SGD steps, weight clipping and
"scale the init" one-liners all hit this. The fix is to do the update under ``torch.no_grad()``
(or inside a function decorated with it); ``.grad`` tensors and ``nn.init`` functions are fine.

Run ``python examples/leaf_updates.py``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class LinearRegression(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(1, dim))
        self.bias = nn.Parameter(torch.zeros(1))
        nn.init.trunc_normal_(self.weight, std=0.1)  # safe: nn.init works under no_grad

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias)


def sgd_step_buggy(model: nn.Module, lr: float) -> None:
    """Plain SGD written without no_grad. HAZARD: raises on the first parameter."""
    for p in model.parameters():
        p -= lr * p.grad  # <-- IPL003


def sgd_step(model: nn.Module, lr: float, weight_decay: float = 0.0) -> None:
    """Plain SGD. Safe: the updates happen with grad mode off."""
    with torch.no_grad():
        for p in model.parameters():
            if weight_decay:
                p.grad.add_(p, alpha=weight_decay)  # safe: .grad is not a leaf needing grad
            p -= lr * p.grad


@torch.no_grad()
def clip_weights(model: nn.Module, limit: float) -> None:
    """WGAN-style weight clipping. Safe: the decorator turns grad mode off."""
    for p in model.parameters():
        p.clamp_(-limit, limit)


def clip_weights_buggy(model: nn.Module, limit: float) -> None:
    """The same clipping without the decorator. HAZARD."""
    for p in model.parameters():
        p.clamp_(-limit, limit)  # <-- IPL003


def clip_weights_legacy(model: nn.Module, limit: float) -> None:
    """The original WGAN spelling through ``.data``. Safe here: no graph is alive."""
    for p in model.parameters():
        p.data.clamp_(-limit, limit)


def make_scaled_weight_buggy(rows: int, cols: int) -> torch.Tensor:
    """Small random init for a raw tensor. HAZARD: scaling the leaf after creating it."""
    w = torch.randn(rows, cols, requires_grad=True)
    w.mul_(0.01)  # <-- IPL003
    return w


def make_scaled_weight(rows: int, cols: int) -> torch.Tensor:
    """Scale first, then ask for gradients. Safe."""
    w = torch.randn(rows, cols) * 0.01
    w.requires_grad_(True)  # safe: flips a flag, touches no data
    return w


def fit(step, epochs: int = 50) -> float:
    torch.manual_seed(0)
    model = LinearRegression(3)
    true_w = torch.tensor([[1.0, -2.0, 0.5]])
    for _ in range(epochs):
        x = torch.randn(64, 3)
        y = x @ true_w.T + 0.3
        loss = F.mse_loss(model(x), y)
        model.zero_grad()
        loss.backward()
        step(model, 0.1)
        clip_weights(model, 5.0)
    return loss.item()


def _attempt(name: str, fn) -> None:
    try:
        result = fn()
    except RuntimeError as err:
        print(f"{name:<26} FAILED: {err}")
    else:
        print(f"{name:<26} ok" + ("" if result is None else f": {result}"))


def main() -> None:
    _attempt("sgd_step", lambda: f"final loss {fit(sgd_step):.4f}")
    _attempt("sgd_step_buggy", lambda: fit(sgd_step_buggy))
    model = LinearRegression(3)
    _attempt("clip_weights_legacy", lambda: clip_weights_legacy(model, 0.01))
    _attempt("clip_weights_buggy", lambda: clip_weights_buggy(model, 0.01))
    _attempt("make_scaled_weight", lambda: tuple(make_scaled_weight(2, 3).shape))
    _attempt("make_scaled_weight_buggy", lambda: make_scaled_weight_buggy(2, 3))


if __name__ == "__main__":
    main()

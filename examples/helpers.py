"""Small helpers that write into tensors they did not create.

``add_residuals`` adds skip connections into its first argument in place. The caller in
``FusionHead`` still needs that argument afterwards: a Linear layer saved it for backward and the
gate reads it again, so the helper's write breaks backward *and* changes the gate's value.
``add_residuals_copy`` clones first and is safe for every caller.

``CenteredMLP`` keeps a second name for a tensor and then centers the tensor in place, so the
"snapshot" it adds back at the end already holds the centered values: no error, wrong output.

Run ``python examples/helpers.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


def add_residuals(hidden: torch.Tensor, residuals: Sequence[torch.Tensor]) -> torch.Tensor:
    """Sum ``residuals`` into ``hidden``. HAZARD: writes into the caller's tensor."""
    for residual in residuals:
        hidden += residual  # <-- IPL001
    return hidden


def add_residuals_copy(hidden: torch.Tensor, residuals: Sequence[torch.Tensor]) -> torch.Tensor:
    """Sum ``residuals`` onto a copy of ``hidden``. Safe."""
    total = hidden.clone()
    for residual in residuals:
        total += residual  # safe: ``total`` belongs to this function
    return total


def pad_features(x: torch.Tensor, width: int) -> torch.Tensor:
    """Right-pad the last dimension with zeros. Safe: writes only into a new buffer."""
    out = x.new_zeros(*x.shape[:-1], width)
    out[..., : x.shape[-1]] = x
    return out


class FusionHead(nn.Module):
    """Two branches fused into the trunk, then gated by the trunk itself."""

    def __init__(self, dim: int, copy_first: bool = False) -> None:
        super().__init__()
        self.trunk = nn.Linear(dim, dim)
        self.branch_a = nn.Linear(dim, dim)
        self.branch_b = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.out = nn.Linear(dim, 4)
        self.copy_first = copy_first

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.trunk(x)
        skips = [self.branch_a(h), self.branch_b(h)]  # both Linears save ``h`` for backward
        if self.copy_first:
            fused = add_residuals_copy(h, skips)
        else:
            fused = add_residuals(h, skips)  # the helper writes into ``h`` ...
        gate = torch.sigmoid(h)  # ... which is still read here as the unfused trunk output
        return self.out(fused * gate)


class CenteredMLP(nn.Module):
    """Centers the hidden features and adds the uncentered ones back as a residual."""

    def __init__(self, dim: int, fixed: bool = False) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.fixed = fixed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        if self.fixed:
            residual = h
            h = h - h.mean(dim=-1, keepdim=True)  # safe: a new tensor, ``residual`` untouched
        else:
            residual = h  # meant as a snapshot of the raw features
            h.sub_(h.mean(dim=-1, keepdim=True))  # <-- IPL002
        h = self.fc2(torch.tanh(h))
        return h + residual


def main() -> None:
    torch.manual_seed(0)
    dim = 16
    x = torch.randn(3, dim)

    head = FusionHead(dim)
    safe_head = FusionHead(dim, copy_first=True)
    safe_head.load_state_dict(head.state_dict())
    print("FusionHead with add_residuals_copy: output sum", f"{safe_head(x).sum().item():+.4f}")
    out = head(x)
    print("FusionHead with add_residuals     : output sum", f"{out.sum().item():+.4f}  <- differs")
    safe_head(x).sum().backward()
    print("  backward with add_residuals_copy: ok")
    try:
        out.sum().backward()
    except RuntimeError as err:
        print("  backward with add_residuals     : FAILED:", str(err).split(" Hint:")[0])

    buggy = CenteredMLP(dim)
    fixed = CenteredMLP(dim, fixed=True)
    fixed.load_state_dict(buggy.state_dict())
    gap = (buggy(x) - fixed(x)).abs().max().item()
    print(f"CenteredMLP: in-place centering changes the residual, max output gap {gap:.4f}")
    buggy(x).sum().backward()
    print("  (backward runs fine, so nothing but the numbers tells you)")
    print("pad_features:", tuple(pad_features(x, 20).shape))


if __name__ == "__main__":
    main()

"""Multi-head self-attention: masking before softmax is safe, editing its output is not.

Softmax computes its gradient from its own output, so autograd keeps that output alive until
backward. Writing into the attention weights afterwards (``masked_fill_``, in-place dropout)
changes a tensor that backward still needs, and ``loss.backward()`` raises.

Masking the *scores* in place before the softmax is fine: the scaled scores were produced by a
matmul and a division by a Python number, neither of which keeps its result.

Run ``python examples/attention.py``.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def causal_mask(length: int) -> torch.Tensor:
    """True above the diagonal: positions a query may not look at."""
    return torch.ones(length, length, dtype=torch.bool).triu(diagonal=1)


class SafeSelfAttention(nn.Module):
    """Masks the scores, then normalises. Safe."""

    def __init__(self, dim: int, heads: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.attn_drop = nn.Dropout(dropout)

    def split_heads(self, t: torch.Tensor) -> torch.Tensor:
        batch, length, _ = t.shape
        return t.view(batch, length, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        batch, length, dim = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores.masked_fill_(mask, float("-inf"))  # safe: nothing saved the scaled scores
        attn = scores.softmax(dim=-1)
        attn = self.attn_drop(attn)  # safe: out-of-place dropout makes a new tensor
        out = (attn @ v).transpose(1, 2).reshape(batch, length, dim)
        return self.proj(out)


class PostMaskSelfAttention(nn.Module):
    """Normalises first, then zeroes masked weights in place. HAZARD."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        batch, length, dim = x.shape
        qkv = self.qkv(x).view(batch, length, 3, self.heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        attn = torch.softmax(q @ k.transpose(-2, -1) * self.head_dim**-0.5, dim=-1)
        attn.masked_fill_(mask, 0.0)  # <-- IPL001
        attn = attn / attn.sum(dim=-1, keepdim=True)
        out = (attn @ v).transpose(1, 2).reshape(batch, length, dim)
        return self.proj(out)


class InplaceDropoutAttention(nn.Module):
    """Saves memory with ``nn.Dropout(inplace=True)`` on the weights. HAZARD."""

    def __init__(self, dim: int, heads: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.attn_drop = nn.Dropout(dropout, inplace=True)
        self.proj_drop = nn.Dropout(dropout, inplace=True)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, dim = x.shape
        q = self.q(x).view(batch, length, self.heads, -1).transpose(1, 2)
        k, v = self.kv(x).view(batch, length, 2, self.heads, -1).permute(2, 0, 3, 1, 4)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)  # <-- IPL001
        out = (attn @ v).transpose(1, 2).reshape(batch, length, dim)
        out = self.proj(out)
        return self.proj_drop(out)  # safe: a Linear does not keep its output


def _run(name: str, fn) -> None:
    try:
        fn().pow(2).mean().backward()
    except RuntimeError as err:
        print(f"{name:<24} backward FAILED: {str(err).split(' Hint:')[0]}")
    else:
        print(f"{name:<24} backward ok")


def main() -> None:
    torch.manual_seed(0)
    dim, heads, length = 32, 4, 6
    x = torch.randn(2, length, dim)
    mask = causal_mask(length)
    safe = SafeSelfAttention(dim, heads)
    post = PostMaskSelfAttention(dim, heads)
    drop = InplaceDropoutAttention(dim, heads)
    _run("SafeSelfAttention", lambda: safe(x, mask))
    _run("PostMaskSelfAttention", lambda: post(x, mask))
    _run("InplaceDropoutAttention", lambda: drop.train()(x))
    drop.eval()
    _run("  ... same in eval()", lambda: drop(x))
    print("(in eval mode dropout is the identity, so the bug only shows up while training)")


if __name__ == "__main__":
    main()

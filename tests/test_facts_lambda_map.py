"""``map(lambda t: f(t), xs)`` is the generator ``(f(t) for t in xs)``: each element is what
the lambda computes from one element of ``xs``, views and saves included. Only a
single-parameter lambda over one iterable is read so; other ``map`` calls stay unknown.
Every program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes

HEADS = """
import torch
from torch import nn


def to_heads(t, h):
    b, n, d = t.shape
    return t.reshape(b, n, h, d // h).transpose(1, 2)


class Attention(nn.Module):
    def __init__(self, dim=8, heads=2):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, dim * 3)

    def forward(self, x):
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: to_heads(t, self.heads), (q, k, v))
        {scale}
        return (q @ k.transpose(-1, -2)).softmax(-1) @ v


Attention()(torch.randn(2, 4, 8)).sum().backward()
"""


def test_a_lambda_mapped_over_chunk_views() -> None:
    """lucidrains' nystrom-attention (round 19): ``q *= self.scale`` writes one of the views
    ``chunk`` returned, through the lambda's reshape and transpose."""
    hazard = HEADS.format(scale="q *= 0.5")
    safe = HEADS.format(scale="q = q * 0.5")
    assert codes(hazard) == [(20, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe, match="is a view and is being modified inplace")

"""Facts a subclass shares with its same-file bases, and modules built through a wrapper:

- ``class B(A)`` holds the submodules ``A.__init__`` stored on ``self``, and
  ``self.helper(x)`` of a method ``A`` defines is computed from B's call;
- a ``@staticmethod`` called as ``self.split_last_dim(x, n)`` is computed like a function;
- ``weight_norm(nn.Linear(...))`` (the op table's ``module_wrappers``, probed: they return
  the module they are given) is the Linear.

Flow++'s gated attention (round 19) needs all three. Every program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes

ATTENTION = """
import torch
from torch import nn
from torch.nn.utils import weight_norm


class Base(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.in_proj = {proj}

    @staticmethod
    def split_last_dim(x, n):
        b, l, c = x.size()
        return x.view(b, l, n, c // n).permute(0, 2, 1, 3)


class Attention(Base):
    def forward(self, x):
        c = x.size(-1)
        memory, query = torch.split(self.in_proj(x), (2 * c, c), dim=-1)
        q = self.split_last_dim(query, 2)
        {scale}
        return (q.sum() + memory.sum()).reshape(1)


Attention()(torch.randn(2, 3, 8)).sum().backward()
"""

VIEW_ERROR = "is a view and is being modified inplace"


def test_a_view_through_an_inherited_static_method_of_a_split_output() -> None:
    for proj in ("nn.Linear(d, 3 * d)", "weight_norm(nn.Linear(d, 3 * d))"):
        hazard = ATTENTION.format(proj=proj, scale="q *= 0.5")
        safe = ATTENTION.format(proj=proj, scale="q = q * 0.5")
        assert codes(hazard) == [(23, "IPL001")], proj
        assert codes(safe) == [], proj
        behave(hazard, safe, match=VIEW_ERROR)

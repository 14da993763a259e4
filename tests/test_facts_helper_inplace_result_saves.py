"""What an in-place op inside a helper saves travels with the tensor the helper returns
(PyG's ``scatter`` on torch >= 1.12, rounds 24 and 34):

``scatter`` ends ``return out.scatter_reduce_(dim, index, src, reduce)``; ``scatter_reduce_``
keeps its own result for backward, so a caller's ``out += x_r`` on what ``scatter`` returned
breaks the backward. The helper's result is computed by interpreting its body with the
call's values; that interpretation recorded no write (the helper's summary applies it) and so
dropped what the in-place op saved along with it. An out-of-place add, or a ``clone()`` of
the result, is clean. The programs run with torch.
"""

from __future__ import annotations

from programs import behave, codes

SCATTER = """
import torch
from torch import nn


def scatter(src, index, dim_size):
    out = src.new_zeros(dim_size, src.size(1))
    index = index.unsqueeze(-1).expand(src.size())
    return out.scatter_reduce_(0, index, src, "sum", include_self=False){tail}


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x, index):
        h = self.lin(x)
        out = scatter(h, index, 4)
        {add}
        return out


conv = Conv()
index = torch.tensor([0, 1, 2, 3, 0, 1])
conv(torch.randn(6, 3), index).sum().backward()
"""


def test_adding_in_place_to_what_scatter_reduce_kept_breaks_backward() -> None:
    hazard = SCATTER.format(tail="", add="out += h[:4]")
    assert codes(hazard) == [(20, "IPL001")]
    behave(
        hazard,
        SCATTER.format(tail="", add="out = out + h[:4]"),
        SCATTER.format(tail=".clone()", add="out += h[:4]"),
    )


def test_the_out_of_place_add_and_the_cloned_result_are_clean() -> None:
    assert codes(SCATTER.format(tail="", add="out = out + h[:4]")) == []
    assert codes(SCATTER.format(tail=".clone()", add="out += h[:4]")) == []

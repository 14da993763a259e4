"""Two facts from round 35's mbrl-lib case and round 34's PyG convolutions:

- ``mean[model_indices] = mean`` writes a tensor whole into a part of itself: the source
  overlaps what is written, and torch refuses it ("some elements of the input tensor and the
  written-to tensor refer to a single memory location"); ``mean[model_indices] =
  mean.clone()`` is the fix;
- a helper or method with ``*args``/``**kwargs`` is interpreted at its calls too, the extra
  values packed as the tuple and the dict it receives (``self.propagate(edge_index, x=x)``
  reaching ``kwargs["x"]``), so what its body saves reaches the caller: PyG's ``scatter``
  returns what ``scatter_reduce_`` kept, and ``out += self.bias`` breaks the backward.

The programs run with torch.
"""

from __future__ import annotations

from programs import behave, codes

from inplace_lint.autofix import fix_text

UNSHUFFLE = """
import torch

mean = torch.randn(6, 2, requires_grad=True) * 2
model_indices = torch.tensor([2, 0, 1, 5, 3, 4])
mean[model_indices] = {source}
mean.sum().backward()
"""

OVERLAP_ERROR = "refer to a single memory location"


def test_a_tensor_written_whole_into_part_of_itself_overlaps() -> None:
    hazard = UNSHUFFLE.format(source="mean")
    assert codes(hazard) == [(6, "IPL002")]
    safe = UNSHUFFLE.format(source="mean.clone()")
    assert codes(safe) == []
    behave(hazard, safe, match=OVERLAP_ERROR)


PROPAGATE = """
import torch
from torch import nn


def scatter(src, index, dim_size):
    out = src.new_zeros(dim_size, src.size(1))
    index = index.view(-1, 1).expand_as(src)
    return out.scatter_reduce_(0, index, src, "amax", include_self=False)


class MessagePassing(nn.Module):
    def propagate(self, edge_index, size=None, **kwargs):
        x = kwargs["x"]
        x_j = x.index_select(0, edge_index[0])
        return scatter(x_j, edge_index[1], dim_size=x.size(0))


class GINConv(MessagePassing):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x, edge_index):
        x = self.lin(x)
        out = self.propagate(edge_index, x=x)
        {add}
        return out


edge_index = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])
GINConv()(torch.randn(4, 3), edge_index).sum().backward()
"""


def test_a_method_taking_kwargs_hands_back_what_its_helper_saved() -> None:
    hazard = PROPAGATE.format(add="out += 2 * x")
    assert codes(hazard) == [(27, "IPL001")]
    safe = PROPAGATE.format(add="out = out + 2 * x")
    assert codes(safe) == []
    behave(hazard, safe)


def test_the_overlapping_copy_is_fixed_safely_by_copying_from_a_clone() -> None:
    fixed = fix_text(UNSHUFFLE.format(source="mean"), "t.py").after
    assert fixed == UNSHUFFLE.format(source="mean.clone()")
    behave(UNSHUFFLE.format(source="mean"), fixed, match=OVERLAP_ERROR)

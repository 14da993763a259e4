"""A custom Function's forward inputs annotated ``Tensor`` are tensors.

pyg's ``SparseCrossEntropy.forward(ctx, inputs: Tensor, edge_label_index: Tensor, ...)``
gathers ``out = inputs[edge_label_index[0], edge_label_index[1]]``: the index is a tensor, so
the gather is a copy and ``out.neg_()`` writes no input (round 22). Unannotated, the index
may be a list of ints, which would make ``out`` a view of ``inputs``. The program runs under
torch.
"""

from __future__ import annotations

from tests.programs import codes, run

GATHER = """
import torch
from torch import Tensor


class Gathered(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs: Tensor, index: INDEX) -> Tensor:
        ctx.save_for_backward(inputs, index)
        out = inputs[index[0], index[1]]
        out.neg_()
        return out.sum()

    @staticmethod
    def backward(ctx, grad_out):
        inputs, index = ctx.saved_tensors
        grad = torch.zeros_like(inputs)
        grad[index[0], index[1]] = -grad_out
        return grad, None


x = torch.randn(3, 4, requires_grad=True)
loss = Gathered.apply(x, torch.tensor([[0, 2], [1, 3]]))
loss.backward()
"""


def test_a_tensor_index_of_an_annotated_input_gathers_a_copy() -> None:
    assert codes(GATHER.replace("INDEX", "Tensor")) == []
    line = GATHER.splitlines().index("        out.neg_()") + 1
    assert codes(GATHER.replace(": INDEX", "")) == [(line, "IPL005")]  # may be a list: a view
    namespace = run(GATHER.replace("INDEX", "Tensor"))
    assert namespace["x"].grad is not None  # type: ignore[attr-defined]


LISTED = """
from typing import List, Optional

import torch
from torch import Tensor


class Grads(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, out_grads: List[Optional[Tensor]]) -> Tensor:
        out_grads[0] = 2 * x.detach()
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2, None


x = torch.randn(3, requires_grad=True)
held = [None]
Grads.apply(x, held).sum().backward()
"""


def test_an_input_annotated_as_a_list_is_a_container() -> None:
    assert codes(LISTED) == []  # ``out_grads[0] = ...`` stores into a list: no tensor write
    assert run(LISTED)["held"][0] is not None  # type: ignore[index]

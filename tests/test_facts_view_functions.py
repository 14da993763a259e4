"""A view made by a torch function (``torch.tensor_split(g, ...)``, ``torch.narrow(g, ...)``)
shares storage with its argument as much as one made by the method does, so a helper writing
such a view of its parameter writes the caller's tensor (round 30, physicsnemo's halo
padding: a custom backward split ``grad_output`` with ``torch.tensor_split`` and added the
neighbours' halos into the pieces). The programs are run with torch.
"""

from __future__ import annotations

from programs import behave, codes

HALO = """
import torch


def apply_halo(grad_input, halo):
    grad_input.narrow(0, 0, 1).add_(halo)
    return grad_input


def bwd(grad_output):
    left, local, right = {split}
    return apply_halo(local, left.clone())


class Halo(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad_output):
        return torch.cat([torch.zeros(1, 3), bwd(grad_output), torch.zeros(1, 3)])


x = torch.randn(4, 3, requires_grad=True)
Halo.apply(x).sum().backward()
"""


def test_a_view_made_by_a_torch_function_is_the_callers_tensor() -> None:
    hazard = HALO.format(split="torch.tensor_split(grad_output, [1, 3], dim=0)")
    safe = HALO.format(split="torch.tensor_split(grad_output.clone(), [1, 3], dim=0)")
    assert codes(hazard) == [(6, "IPL005")]
    assert codes(safe) == []
    # ``.sum()``'s gradient is one value expanded: the write into it is refused
    behave(hazard, safe, match="more than one element of the written-to tensor")

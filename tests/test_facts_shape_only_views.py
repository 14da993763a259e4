"""A shape-only in-place op (``unsqueeze_``, ``t_``) on a view changes that view's shape and
nothing else: in a custom Function's backward, reshaping a view of ``grad_output`` in place
leaves the gradient other consumers see untouched. Every program is run with torch.
"""

from __future__ import annotations

import torch
from programs import codes, run

FUNCTION = """
import torch


class LogdetScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x * x).sum(-1)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        {reshape}
        return 2 * x * grad_output


x = torch.randn(4, 3, requires_grad=True)
y = LogdetScale.apply(x)
y.sum().backward()
"""

ON_A_VIEW = "\n        ".join(
    (
        "grad_output = grad_output.unsqueeze(-1)",
        "grad_output.squeeze_(-1)",
        "grad_output.unsqueeze_(-1)",
    )
)


def test_reshaping_a_view_of_grad_output_in_place() -> None:
    """linear-operator's InvQuadLogdet backward (untuned run 12)."""
    source = FUNCTION.format(reshape=ON_A_VIEW)
    assert codes(source) == []
    scope = run(source)
    assert torch.allclose(scope["x"].grad, 2 * scope["x"].detach())

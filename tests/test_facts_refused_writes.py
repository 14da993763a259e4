"""Writes torch refuses at once, with grad on: views a custom Function returned, and ``out=``
calls with an argument that requires grad.

Every program is run with torch: the hazards raise, the look-alikes run.
"""

from __future__ import annotations

import pytest
from programs import behave, codes, run

FUNCTION = """
import torch


class Split(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        {body}

    @staticmethod
    def backward(ctx, grad):
        return grad.t()


w = torch.randn(3, 3, requires_grad=True)
q = Split.apply(w * 2)
q *= 0.5
q.sum().backward()
"""

#: forward bodies whose output is a view (made inside, or the input as it came)
VIEWS = [
    "x2 = x.clone()\n        heads = x2.t()\n        return heads",
    "return x.clone().t()",
    "return x.clone()[:, 0:3].t()",
]
#: forward bodies whose output is a new tensor: the write is allowed
NEW = ["return (x * 2).t().contiguous()", "return x.t() * 1.0"]


def _write_line(source: str) -> int:
    return source.splitlines().index("q *= 0.5") + 1


@pytest.mark.parametrize("body", VIEWS)
def test_a_view_a_custom_function_returned(body: str) -> None:
    source = FUNCTION.format(body=body)
    assert codes(source) == [(_write_line(source), "IPL001")]


@pytest.mark.parametrize("body", NEW)
def test_a_new_tensor_a_custom_function_returned(body: str) -> None:
    assert codes(FUNCTION.format(body=body)) == []


OUT = """
import torch

w = torch.randn(3, requires_grad=True)
buf = torch.empty(3)
{call}
"""


def test_out_with_an_argument_that_requires_grad() -> None:
    assert codes(OUT.format(call="torch.mul(w, 2, out=buf)")) == [(6, "IPL001")]
    assert codes(OUT.format(call="torch.mul(w.detach(), 2, out=buf)")) == []
    assert codes(OUT.format(call="with torch.no_grad():\n    torch.mul(w, 2, out=buf)")) == []


SOLVER = """
import torch


def linear_cg(matmul_closure, rhs, n_iter=3):
    residual = rhs - matmul_closure(rhs)
    direction = residual.clone()
    product = torch.empty_like(residual)
    for _ in range(n_iter):
        mvms = matmul_closure(direction)
        torch.mul(direction, mvms, out=product)
        alpha = product.sum(-2, keepdim=True)
        torch.addcmul(residual, alpha, mvms, value=-1, out=residual)
    return residual


matrix = torch.eye(3) * 2
{call}
"""
IN_NO_GRAD = "with torch.no_grad():\n    solution = linear_cg(matrix.matmul, torch.ones(3, 1))"
WITH_GRAD = "solution = linear_cg(matrix.requires_grad_().matmul, torch.ones(3, 1))"


def test_out_in_a_solver_whose_grad_is_only_a_guess() -> None:
    """linear-operator's CG (untuned run 12): ``matmul_closure(v)`` is taken for a model, so
    its result may require grad; torch refuses ``out=`` loudly at once, so only evident grad
    (a leaf, a parameter, a known module's output) is reported. Every caller of the real
    solver runs it without grad; one that does not is missed (the price of the rule)."""
    assert codes(SOLVER.format(call=IN_NO_GRAD)) == []
    assert codes(SOLVER.format(call=WITH_GRAD)) == []
    evident = (
        SOLVER.replace("        mvms = matmul_closure(direction)\n", "")
        .replace(
            "direction, mvms, out=product", "direction, rhs.detach().requires_grad_(), out=product"
        )
        .replace("alpha, mvms,", "alpha, direction,")
    )
    assert codes(evident.format(call=IN_NO_GRAD.split(":\n    ")[1])) == [(10, "IPL001")]


def test_the_programs_behave_as_labelled() -> None:
    match = "is a view and is being modified inplace"
    behave(FUNCTION.format(body=VIEWS[0]), *(FUNCTION.format(body=b) for b in NEW), match=match)
    for body in VIEWS[1:]:
        behave(FUNCTION.format(body=body), match=match)
    behave(
        OUT.format(call="torch.mul(w, 2, out=buf)"),
        OUT.format(call="torch.mul(w.detach(), 2, out=buf)"),
        OUT.format(call="with torch.no_grad():\n    torch.mul(w, 2, out=buf)"),
        match="don't support automatic differentiation",
    )
    behave(SOLVER.format(call=WITH_GRAD), SOLVER.format(call=IN_NO_GRAD), match="out=")


INIT_HELPER = """
import torch


def glorot_orthogonal(tensor, scale):
    torch.nn.init.orthogonal_(tensor.data)
    scale /= (tensor.size(-2) + tensor.size(-1)) * tensor.var()
    tensor.data *= scale.sqrt()


class Block(torch.nn.Module):
    def __init__(self, h):
        super().__init__()
        self.lin1 = torch.nn.Linear(h, h)
        glorot_orthogonal(self.lin1.weight, scale=2.0)

    def forward(self, x):
        return self.lin1(x)


Block(4)(torch.randn(2, 4)).sum().backward()
"""


def test_a_helper_writing_its_parameter_through_data_refuses_no_leaf() -> None:
    """torch_geometric's ``glorot_orthogonal``: ``nn.init.orthogonal_(w.data)`` and
    ``w.data *= s`` reach the caller's parameter through ``.data``, which torch allows on a
    leaf that requires grad: no IPL004 leaf report at the caller."""
    assert [code for _, code in codes(INIT_HELPER)] == ["IPL007"]  # the read after, as before
    run(INIT_HELPER)

"""A parameter every same-file call fills with a plain function is no model. A value called
like a function with tensors is taken for a model, whose output needs grad; but garage's
conjugate-gradient solver is handed ``f_Ax``, the closure ``build_hvp`` makes of
``autograd.grad`` calls (no ``create_graph``), whose results need none, so the solver's
``r -= v * z`` after ``torch.dot(r, r)`` writes nothing a graph saved. A closure that calls
what it holds (``model(v)``) may run a model: the solver's write is then still found. The
programs run with torch.
"""

from __future__ import annotations

import pytest
from programs import IN_PLACE_ERROR, codes, run

SAFE = """
import torch
from torch import nn


def build_hvp(f_constraint, params):
    f = f_constraint()
    f_grads = torch.autograd.grad(f, params, create_graph=True)

    def _eval(vector):
        gvp = torch.sum(torch.stack([torch.sum(g.reshape(-1) * vector) for g in f_grads]))
        hvp = list(torch.autograd.grad(gvp, params, retain_graph=True))
        return torch.cat([h.reshape(-1) for h in hvp]) + 1e-5 * vector

    return _eval


def conjugate_gradient(f_Ax, b, iters):
    p = b.clone()
    r = b.clone()
    x = torch.zeros_like(b)
    rdotr = torch.dot(r, r)
    for _ in range(iters):
        z = f_Ax(p)
        v = rdotr / torch.dot(p, z)
        x += v * p
        r -= v * z
        newrdotr = torch.dot(r, r)
        p = r + newrdotr / rdotr * p
        rdotr = newrdotr
    return x


def step(model, params, inputs):
    flat = torch.cat([p.grad.reshape(-1) for p in params])
    f_Ax = build_hvp(lambda: (model(inputs) ** 4).sum(), params)
    return conjugate_gradient(f_Ax, flat, 3)


torch.manual_seed(0)
model = nn.Linear(3, 3, bias=False)
inputs = torch.randn(2, 3)
(model(inputs) ** 2).sum().backward()
direction = step(model, list(model.parameters()), inputs)
print(direction.requires_grad)
"""

HAZARD = """
import torch
from torch import nn


def build_hvp(f_constraint, params):
    f = f_constraint()
    f_grads = torch.autograd.grad(f, params, create_graph=True)

    def _eval(vector):
        gvp = torch.sum(torch.stack([torch.sum(g.reshape(-1) * vector) for g in f_grads]))
        hvp = list(torch.autograd.grad(gvp, params, retain_graph=True))
        return torch.cat([h.reshape(-1) for h in hvp]) + 1e-5 * vector

    return _eval


def build_model_product(model):
    def _eval(vector):
        return model(vector.view(3, 3)).reshape(-1)

    return _eval


def conjugate_gradient(f_Ax, b, iters):
    p = b.clone()
    r = b.clone()
    x = torch.zeros_like(b)
    rdotr = torch.dot(r, r)
    for _ in range(iters):
        z = f_Ax(p)
        v = rdotr / torch.dot(p, z)
        x += v * p
        r -= v * z
        newrdotr = torch.dot(r, r)
        p = r + newrdotr / rdotr * p
        rdotr = newrdotr
    return x


def step(model, params, inputs):
    flat = torch.cat([p.grad.reshape(-1) for p in params])
    f_Ax = build_model_product(model)
    return conjugate_gradient(f_Ax, flat, 3)


torch.manual_seed(0)
model = nn.Linear(3, 3, bias=False)
inputs = torch.randn(2, 3)
(model(inputs) ** 2).sum().backward()
direction = step(model, list(model.parameters()), inputs)
direction.sum().backward()
"""


def test_a_closure_of_gradient_calls_runs_no_model() -> None:
    assert codes(SAFE) == []
    assert run(SAFE)["direction"].requires_grad is False


def test_a_closure_that_calls_what_it_holds_may_run_a_model() -> None:
    assert codes(HAZARD) == [(34, "IPL001")]
    with pytest.raises(RuntimeError, match=IN_PLACE_ERROR):
        run(HAZARD)


def test_a_nested_def_passed_directly_may_run_a_model() -> None:
    """A ``def`` handed over as it is (not made by a helper whose closures were checked) may
    call a model: its caller's parameter stays a possible model."""
    source = HAZARD.replace(
        "    f_Ax = build_model_product(model)\n",
        "    def f_Ax(vector):\n        return model(vector.view(3, 3)).reshape(-1)\n\n",
    )
    assert (34, "IPL001") in codes(source)
    with pytest.raises(RuntimeError, match=IN_PLACE_ERROR):
        run(source)

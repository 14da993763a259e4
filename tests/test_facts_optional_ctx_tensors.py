"""A tensor a custom Function keeps on ``ctx`` only when it is needed (``grads =
torch.zeros_like(acts) if acts.requires_grad else None``) is still a tensor its ``backward``
writes, and still the Function's own (round 30, NeMo's RNN-T loss: ``ctx.grads.mul_()`` in
backward rescales the kept gradients again on every pass over a retained graph). The
programs are run with torch.
"""

from __future__ import annotations

import pytest
from programs import codes, run

RNNT = """
import torch
from torch.autograd import Function


class _RNNT(Function):
    @staticmethod
    def forward(ctx, acts):
        grads = torch.zeros_like(acts) if acts.requires_grad else None
        if grads is not None:
            grads += torch.softmax(acts, dim=-1)
        ctx.grads = grads
        return acts.logsumexp(-1).sum().unsqueeze(-1)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.grads is not None:
            return {scale}
        return None


torch.manual_seed(0)
w = torch.randn(2, 3, requires_grad=True)
total = _RNNT.apply(w * 2).mean() * 3
{passes}
"""

TWICE = "(logged,) = torch.autograd.grad(total, w, retain_graph=True)\ntotal.backward()"


def test_a_kept_tensor_written_in_backward_over_a_retained_graph() -> None:
    hazard = RNNT.format(scale="ctx.grads.mul_(grad_output)", passes=TWICE)
    safe = RNNT.format(scale="ctx.grads * grad_output", passes=TWICE)
    assert codes(hazard) == [(18, "IPL005")]
    assert codes(safe) == []
    torch = pytest.importorskip("torch")
    wrong, right = run(hazard), run(safe)
    assert torch.allclose(right["logged"], right["w"].grad)
    assert not torch.allclose(wrong["logged"], wrong["w"].grad)  # scaled twice


def test_a_kept_tensor_written_in_the_only_backward_is_the_functions_own() -> None:
    once = RNNT.format(scale="ctx.grads.mul_(grad_output)", passes="total.backward()")
    assert codes(once) == []
    run(once)

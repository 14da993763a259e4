"""Facts about values that may or may not share their source's storage, each from the
seventeenth session's measurements (round 26's ms-swift and OLMo cases): a mask made by
comparing a tensor gathers a copy when it indexes; what an op saves of a soft alias
(``x.float()``) breaks when that alias is written; a function that copies its argument on one
arm still breaks what it saves of its own copy; a ``range()`` counter is an int, so ``f[i - 1]``
is a view. Every program is run with torch.
"""

from __future__ import annotations

import pytest
from programs import behave, codes, run

MASKED = """
import torch


def jsd_logits(student_logits, labels, temperature):
    mask = labels != -100
    student_logits_masked = student_logits[{index}]
    student_logits_masked.div_(temperature)
    total_loss = student_logits_masked.new_zeros(())
    total_loss = total_loss - student_logits_masked.log_softmax(-1).sum()
    return total_loss
"""


def _leaves_logits_alone(source: str) -> bool:
    torch = pytest.importorskip("torch")
    logits = torch.randn(2, 3, 5)
    kept = logits.clone()
    run(source)["jsd_logits"](logits, torch.tensor([[1, -100, 2], [0, 3, -100]]), 0.9)
    return bool(torch.equal(logits, kept))


def test_a_mask_made_by_a_comparison_gathers_a_copy() -> None:
    """ms-swift's GKD loss (no caller in the file): ``logits[labels != -100]`` is a copy to
    divide in place; a basic slice is a view of the caller's logits."""
    safe = MASKED.format(index="mask")
    hazard = MASKED.format(index=":, :2")
    assert codes(safe) == []
    assert codes(hazard) == [(8, "IPL004")]
    assert _leaves_logits_alone(safe)
    assert not _leaves_logits_alone(hazard)


CENTERED = """
import torch
from torch import nn

torch.manual_seed(0)


class AMDLayerNorm(nn.Module):
    def forward(self, x):
        og_dtype = x.dtype
        if og_dtype != torch.float32:
            x = x.to(torch.float32)
        else:
            x = x.clone()
        var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
        {center}
        return x * var.add(1e-5).rsqrt()


out = AMDLayerNorm()(nn.Linear(4, 4)(torch.randn(2, 4)))
out.sum().backward()
"""


def test_what_an_op_keeps_of_a_copy_or_soft_alias_breaks_when_it_is_written() -> None:
    """OLMo's AMD layer norm: ``var_mean`` keeps ``x`` (a clone, or ``x.to(float32)``);
    ``x -= mean`` overwrites it, whichever it is."""
    hazard = CENTERED.format(center="x -= mean")
    safe = CENTERED.format(center="x = x - mean")
    assert codes(hazard) == [(16, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


RECURRENCE = """
import torch

x = torch.ones(1, requires_grad=True)
f = torch.zeros(10)
f[0] = 1
for i in range(1, 10):
    prev = {prev} * x
    f[i] = prev
grad = torch.autograd.grad(f.sum(), [x])[0]
"""


def test_a_range_loop_counter_is_an_int_index_so_the_row_is_a_view() -> None:
    """A recurrence over ``range``: ``f[i - 1]`` is a view of ``f`` that the multiply keeps,
    which the next ``f[i] = ...`` overwrites (a clone of the row is safe)."""
    hazard = RECURRENCE.format(prev="f[i - 1]")
    safe = RECURRENCE.format(prev="f[i - 1].clone()")
    assert codes(hazard) == [(9, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)

"""A parameter every call seen so far passes a tensor without grad does not require grad.

A module's ``forward`` arguments are assumed to require grad when nothing says otherwise. When
the calls in the file all pass tensors known not to (a target built with ``torch.randint``, a
mask from a comparison), that assumption gives way to what the callers pass: MONAI's fixed
GeneralizedDiceLoss writes ``w = reciprocal(sum(target))`` in place, which breaks backward
only when the target requires grad. Every program here was run with torch.
"""

from __future__ import annotations

import textwrap

from programs import behave, codes

PROGRAM = """
import torch
from torch import nn


class WeightedDice(nn.Module):
    def forward(self, pred, target):
        w = torch.reciprocal(target.sum(0))
        w[torch.isinf(w)] = 0.0
        return 1 - (2 * (pred * target).sum(0) * w).sum() / ((pred + target).sum(0) * w).sum()


loss_fn = WeightedDice()
pred = torch.rand(4, 3, requires_grad=True)
target = {target}
loss = loss_fn(pred, target)
loss.backward()
"""

NO_GRAD = "torch.randint(0, 2, (4, 3)).float()"
WITH_GRAD = "torch.rand(4, 3, requires_grad=True)"


def _program(target: str) -> str:
    return textwrap.dedent(PROGRAM).format(target=target)


def test_a_target_every_caller_passes_without_grad() -> None:
    assert codes(_program(NO_GRAD)) == []


def test_a_target_that_requires_grad() -> None:
    assert codes(_program(WITH_GRAD)) == [(9, "IPL001")]


def test_the_programs_behave_as_labelled() -> None:
    behave(_program(WITH_GRAD), _program(NO_GRAD))

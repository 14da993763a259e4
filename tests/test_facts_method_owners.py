"""A method call on a value of no known kind, of a name exactly one same-file plain class
defines: that class's method, whose argument writes reach the caller (vLLM's rejection
sampler dividing its caller's logits by the temperature in place).

Programs run with torch: the hazard's caller reads changed logits, the look-alike's does not.
"""

from __future__ import annotations

import pytest
from programs import codes, run

PROGRAM = """
import torch


class Sampler:
    @staticmethod
    def apply_temperature(logits, temp):
        return logits.div_(temp.unsqueeze(dim=1))


class RejectionSampler:
    def __init__(self, sampler):
        self.sampler = sampler

    def forward(self, target_logits, temp):
        {copy}target_logits = self.sampler.apply_temperature(target_logits, temp)
        return target_logits.softmax(dim=-1)


def execute_model(logits, temp, rejection_sampler):
    probs = rejection_sampler.forward(logits, temp)
    raw = logits.log_softmax(dim=-1)
    return probs, raw


torch.manual_seed(0)
logits = torch.randn(2, 5)
before = logits.log_softmax(dim=-1)
probs, raw = execute_model(logits, torch.tensor([0.5, 2.0]), RejectionSampler(Sampler()))
{other}"""
COPY = "target_logits = target_logits.clone()\n        "
WRITE = PROGRAM.splitlines().index("        return logits.div_(temp.unsqueeze(dim=1))") + 1


def test_the_one_owner_of_a_method_name_is_called() -> None:
    assert codes(PROGRAM.format(copy="", other="")) == [(WRITE, "IPL004")]
    assert codes(PROGRAM.format(copy=COPY, other="")) == []


def test_a_name_two_classes_define_is_not_resolved() -> None:
    other = (
        "\n\nclass Greedy:\n    def apply_temperature(self, logits, temp):\n        return logits\n"
    )
    assert codes(PROGRAM.format(copy="", other=other)) == []


def test_the_programs_behave_as_labelled() -> None:
    torch = pytest.importorskip("torch")
    hazard = run(PROGRAM.format(copy="", other=""))
    safe = run(PROGRAM.format(copy=COPY, other=""))
    assert not torch.allclose(hazard["raw"], hazard["before"])  # type: ignore[arg-type]
    assert torch.allclose(safe["raw"], safe["before"])  # type: ignore[arg-type]

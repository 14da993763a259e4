"""A class built with ``T(...)`` runs ``T.__init__`` (or a same-file base's) on what the call
passes: its writes to its parameters reach the caller's tensors, as a method's do (round 29,
zuko's ``MaskedAutoregressiveTransform`` stripping the diagonal of the caller's adjacency
matrix in ``_check_adjacency`` while it is built). The programs are run with torch.
"""

from __future__ import annotations

from programs import codes, run

TRANSFORM = """
import torch
from torch import nn


class Base{parent}:
    def __init__(self, features, adjacency=None):
        {init}

    def _check(self, adjacency):
        adjacency.mul_(1 - torch.eye(adjacency.size(0)))
        return int(adjacency.sum())


class Transform(Base):
    pass


def main():
    adjacency = torch.tril(torch.ones(4, 4))
    transform = Transform(4, adjacency={passed})
    penalty = adjacency.sum()
    return penalty


penalty = main()
"""
CHECKS = "super().__init__()\n        self.passes = self._check(adjacency)"
WRITES = "super().__init__()\n        adjacency.mul_(0.5)"


def _program(init: str, passed: str = "adjacency", parent: str = "(nn.Module)") -> str:
    return TRANSFORM.format(init=init, passed=passed, parent=parent)


def test_a_constructor_writing_its_argument_is_judged_at_the_caller() -> None:
    for parent in ("(nn.Module)", ""):  # a module, a plain class
        hazard = _program(CHECKS, parent=parent)
        assert codes(hazard) == [(12, "IPL004")]
        assert run(hazard)["penalty"] == 6.0  # the diagonal is gone from the caller's matrix
        assert run(_program(CHECKS, "adjacency.clone()", parent))["penalty"] == 10.0
    direct = _program(WRITES)
    assert (9, "IPL004") in codes(direct)  # (the unused `_check` is judged on its own)
    assert run(direct)["penalty"] == 5.0


def test_a_copy_passed_or_a_constructor_that_writes_nothing_is_clean() -> None:
    assert codes(_program(CHECKS, "adjacency.clone()")) == []
    owned = CHECKS.replace("\n", "\n        adjacency = adjacency.clone()\n", 1)
    assert codes(_program(owned)) == []
    assert run(_program(owned))["penalty"] == 10.0

"""``requires_grad_`` with a flag that is not written out: the tensor may require grad or not.

``t.requires_grad_(requires_grad)`` copies a caller's setting (MONAI's ``switch_endianness``
restores whatever the input had); only a literal ``True`` (or no argument) makes a leaf that
certainly requires grad, whose in-place write torch refuses.
"""

from __future__ import annotations

import textwrap

import pytest
from programs import behave, codes

PROGRAM = """
import torch


def rebuild(data, flag):
    out = torch.zeros(3).requires_grad_({flag})
    out[0] = 1.0
    return out


rebuild(torch.ones(3), False)
"""


def _program(flag: str) -> str:
    return textwrap.dedent(PROGRAM).format(flag=flag)


@pytest.mark.parametrize("flag", ["", "True", "requires_grad=True"])
def test_a_literal_flag_makes_a_leaf_that_requires_grad(flag: str) -> None:
    assert codes(_program(flag)) == [(7, "IPL003")]


@pytest.mark.parametrize("flag", ["False", "flag", "requires_grad=data.requires_grad"])
def test_a_flag_not_written_out_is_not_taken_for_true(flag: str) -> None:
    assert codes(_program(flag)) == []


def test_torch_refuses_the_write_only_when_the_flag_is_true() -> None:
    behave(_program("True"), _program("flag"), match="leaf Variable that requires grad")

"""Tests on grad mode and on ``requires_grad`` decide which arm runs with grad.

``if not torch.is_grad_enabled():`` runs its body like ``with torch.no_grad():``, and so does a
helper called only there; ``if x.requires_grad: return ...`` leaves ``x`` needing no grad after
it. Every program is run with torch: the hazards raise, the look-alikes run.
"""

from __future__ import annotations

import pytest
from programs import behave, codes

HELPER = """
import torch


def scale(h):
    y = h.sigmoid()
    y.mul_(2)
    return y


w = torch.randn(3, requires_grad=True)
{guard}
    out = scale(w * 1)
    out.sum().backward()
"""

GUARDS = [
    "if not torch.is_grad_enabled():",
    "if w.numel() > 0 and not torch.is_grad_enabled():",
    "if torch.is_inference_mode_enabled():",
    "if torch.is_grad_enabled():\n    pass\nelse:",
]


def test_a_helper_called_with_grad_on_is_checked() -> None:
    assert codes(HELPER.format(guard="if w.numel() > 0:")) == [(7, "IPL001")]


@pytest.mark.parametrize("guard", GUARDS)
def test_a_helper_called_only_with_grad_off_is_not(guard: str) -> None:
    assert codes(HELPER.format(guard=guard)) == []


OUT = """
import torch


def double(x):
    {test}
        return x * 2
    buf = torch.empty(3)
    torch.mul(x, 2, out=buf)
    return buf


w = torch.randn(3, requires_grad=True)
y = double(w * 1)
"""


def test_a_requires_grad_test_leaves_the_rest_without_grad() -> None:
    assert codes(OUT.format(test="if x.requires_grad:")) == []
    assert codes(OUT.format(test="if x.numel() > 0:")) == [(9, "IPL001")]
    assert codes(OUT.format(test="if not x.requires_grad:")) == [(9, "IPL001")]


def test_the_programs_behave_as_labelled() -> None:
    behave(HELPER.format(guard="if w.numel() > 0:"), *(HELPER.format(guard=g) for g in GUARDS))
    behave(
        OUT.format(test="if x.numel() > 0:").replace("return x * 2", "pass"),
        OUT.format(test="if x.requires_grad:"),
        match="don't support automatic differentiation",
    )

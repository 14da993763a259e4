"""``self.forward(x)`` is the class's own ``forward``, not a namesake in another class.

palm-rlhf-pytorch (untuned run 5) has a ``Residual`` whose ``forward`` adds into its input and
a ``PaLM`` whose ``generate`` calls ``self.forward(seq)`` and reads ``seq`` again: the summary
of ``Residual.forward`` was applied there. Both programs were run with torch.
"""

from __future__ import annotations

import textwrap

import pytest
from programs import codes, run

PROGRAM = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Residual(nn.Module):
        def __init__(self, fn):
            super().__init__()
            self.fn = fn

        def forward(self, x):
            y = self.fn(x)
            return x.add_(y)


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(4, 4)
            self.block = Residual(nn.Linear(4, 4))

        def forward(self, x):
            return self.block(self.embed(x)) * 2

        def generate(self, seq):
            out = {call}
            return out, seq.sum()


    seq = torch.randn(2, 4)
    kept = seq.clone()
    out, total = Model().generate(seq)
    """
)


def test_self_forward_is_the_classs_own() -> None:
    """No IPL004 at ``generate``'s call. ``Residual``'s own ``x.add_(y)`` writes the input
    its ``nn.Linear`` (known from ``Residual(nn.Linear(4, 4))``) saved: IPL001 there."""
    assert codes(PROGRAM.format(call="self.forward(seq)")) == [(13, "IPL001")]


def test_the_namesake_really_writes_its_input() -> None:
    """Called directly, ``Residual.forward`` does write its caller's tensor; the model's own
    ``forward`` does not."""
    pytest.importorskip("torch")
    for call, changed in (("self.forward(seq)", False), ("self.block(seq)", True)):
        with torch_no_grad():
            scope = run(PROGRAM.format(call=call))
        assert bool((scope["seq"] != scope["kept"]).any()) is changed  # type: ignore[operator]


def torch_no_grad():  # the write raises under grad (a leaf's view); measure it without
    import torch

    return torch.no_grad()

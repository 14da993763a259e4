"""An arm that ends in ``continue`` or ``break``: what it puts into a container is not seen by
the rest of that iteration (mmdet's per-level target heads, untuned run 6), only by the next
iterations and after the loop. Each program runs under torch."""

from __future__ import annotations

from tests.programs import codes, run

FRESH_PER_LEVEL = """
import torch

out = []
for level in range(3):
    t = torch.zeros(4)
    if level == 0:
        out.append(t)
        continue
    t[0] = 1
    out.append(t)
stacked = torch.stack(out)
"""

SHARED_ACROSS_LEVELS = FRESH_PER_LEVEL.replace(
    "out = []\nfor level in range(3):\n    t = torch.zeros(4)\n",
    "out = []\nt = torch.zeros(4)\nfor level in range(3):\n",
)


def test_an_append_in_an_arm_that_continues_is_not_read_after_the_if() -> None:
    assert codes(FRESH_PER_LEVEL) == []
    assert run(FRESH_PER_LEVEL)["stacked"][0, 0] == 0  # the first level kept its zeros


def test_the_same_tensor_appended_before_a_later_write_is_still_stale() -> None:
    write = SHARED_ACROSS_LEVELS.splitlines().index("    t[0] = 1") + 1
    assert codes(SHARED_ACROSS_LEVELS) == [(write, "IPL002")]
    assert run(SHARED_ACROSS_LEVELS)["stacked"][0, 0] == 1  # changed behind out[0]


LAYERS = """
import torch
import torch.nn as nn


class Enc(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.enc = nn.ModuleList([nn.Linear(4, 4) for _ in range(n)])

    def forward(self, xs_pad, mask):
        for module in self.enc:
            xs_pad = module(xs_pad)
        xs_pad.masked_fill_(mask, 0.0)
        return xs_pad


x = torch.randn(2, 4)
kept = x.clone()
y = Enc(2)(x, torch.tensor([[True, False, False, False]] * 2))
assert torch.equal(x, kept)
"""


def test_a_loop_over_a_models_layers_runs_at_least_once() -> None:
    """``xs_pad`` is a layer's output after the loop, not the caller's tensor (espnet's RNN
    encoders, untuned run 8); an empty model is no configuration to warn about."""
    assert codes(LAYERS) == []
    run(LAYERS)


ZIPPED = LAYERS.replace(
    "        for module in self.enc:\n            xs_pad = module(xs_pad)",
    "        states = [None] * len(self.enc)\n"
    "        for module, state in zip(self.enc, states):\n"
    "            xs_pad = module(xs_pad)",
)


def test_a_zip_over_a_models_layers_runs_at_least_once() -> None:
    """``for rnn, state in zip(self.enc, prev_states)``: the states are paired with the layers,
    so the loop runs as a loop over the layers does (espnet's transducer encoder, run 8)."""
    assert "zip(self.enc, states)" in ZIPPED
    assert codes(ZIPPED) == []
    run(ZIPPED)

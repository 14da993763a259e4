"""A parameter rebound on one outcome of a ``None`` test of another parameter, and written in
place after it (so-vits-svc's ``F0Decoder.forward``: ``if spk_emb is not None: x = x +
self.cond(spk_emb)`` then ``x += ...``), holds the caller's tensor only where that parameter
is ``None``. A call that passes a tensor there gives the write a fresh sum; a call that passes
nothing gives it the caller's tensor. The programs are run with torch.
"""

from __future__ import annotations

from programs import codes, run

DECODER = """
import torch
import torch.nn as nn


class F0Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cond = nn.Conv1d(2, 2, 1)
        self.f0_prenet = nn.Conv1d(1, 2, 3, padding=1)

    def forward(self, x, norm_f0, spk_emb=None):
        x = torch.detach(x)
        if spk_emb is not None:
            x = x + self.cond(spk_emb)
        x {op} self.f0_prenet(norm_f0)
        return x


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Conv1d(2, 2, 1)
        self.dec = F0Decoder()

    def forward(self, x, f0, g):
        g = self.emb(g)
        y = self.dec(x, f0{passed})
        return y + x


torch.manual_seed(0)
model = Model()
x, f0, g = torch.randn(1, 2, 5), torch.randn(1, 1, 5), torch.randn(1, 2, 5)
out = model(x, f0, g)
"""


def _program(op: str, passed: str) -> str:
    return DECODER.format(op=op, passed=passed)


def test_a_call_passing_a_tensor_takes_the_rebinding_path() -> None:
    source = _program("+=", ", spk_emb=g")
    assert codes(source) == []
    assert run(source)["out"].equal(run(_program("= x +", ", spk_emb=g"))["out"])


def test_a_call_passing_nothing_hands_over_its_own_tensor() -> None:
    source = _program("+=", "")
    assert codes(source) == [(16, "IPL004")]
    assert not run(source)["out"].equal(run(_program("= x +", ""))["out"])

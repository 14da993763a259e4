"""A state update under ``no_grad`` writes its state on purpose, so reads of the state want the
new value; a plain local name that took the very tensor before the write to keep the old one
reads it stale (round 31, MAPPO's PopArt: ``old_mean, old_stddev = self.mean, self.stddev``,
then ``self.mean.mul_(beta).add_(...)``, then ``old_mean - self.mean`` in the bias correction,
always zero). The programs are run with torch.
"""

from __future__ import annotations

from programs import codes, run

POPART = """
import torch
from torch import nn


class PopArt(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = torch.zeros(3)
        self.bias = nn.Parameter(torch.zeros(3))

    @torch.no_grad()
    def update(self, batch):
        old_mean = self.mean{copy}
        self.mean.mul_(0.9).add_(batch.mean(0) * 0.1)
        self.bias += {read}


torch.manual_seed(0)
popart = PopArt()
popart.update(torch.randn(8, 3))
bias = popart.bias.detach().clone()
"""


def _program(copy: str = "", read: str = "old_mean - self.mean") -> str:
    return POPART.format(copy=copy, read=read)


def test_a_snapshot_alias_of_updated_state_reads_it_stale() -> None:
    hazard = _program()
    assert codes(hazard) == [(15, "IPL002")]
    fixed = _program(copy=".clone()")
    assert codes(fixed) == []
    assert run(hazard)["bias"].abs().sum() == 0  # type: ignore[attr-defined]
    assert run(fixed)["bias"].abs().sum() > 0  # type: ignore[attr-defined]


def test_reads_of_the_state_itself_want_the_new_value() -> None:
    assert codes(_program(read="self.mean * 0.5")) == []

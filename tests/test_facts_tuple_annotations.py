"""A parameter annotated as a tuple of listed types holds a tensor at each position that names
one (round 31, darts' NLinear: ``x, x_future, x_static = x_in`` with ``x_in: tuple[Tensor,
Optional[Tensor], Optional[Tensor]]``, then ``seq_last = x[:, -1:, :d].detach()`` read after
``x[:, :, :d] = x[:, :, :d] - seq_last`` zeroed it). The programs are run with torch.
"""

from __future__ import annotations

from programs import codes, run

NLINEAR = """
import torch
from torch import nn
from typing import Optional


class NLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(12, 4)

    def forward(self, x_in: {annotation}):
        x, x_future = x_in
        batch = x.shape[0]
        seq_last = x[:, -1:, :2].detach(){copy}
        x[:, :, :2] = x[:, :, :2] - seq_last
        x = self.layer(x.view(batch, -1)).view(batch, 2, 2)
        return x + seq_last


torch.manual_seed(0)
batch = torch.randn(3, 4, 3)
out = NLinear()((batch, None))
"""


def _program(annotation: str, copy: str = "") -> str:
    return NLINEAR.format(annotation=annotation, copy=copy)


def test_the_positions_of_an_annotated_tuple_hold_tensors() -> None:
    for annotation in ("tuple[torch.Tensor, Optional[torch.Tensor]]", "Tuple[Tensor, None]"):
        assert codes(_program(annotation)) == [(16, "IPL002")]
    hazard = run(_program("tuple[torch.Tensor, Optional[torch.Tensor]]"))
    # the fix: a copy of the last step keeps its values
    fixed = _program("tuple[torch.Tensor, Optional[torch.Tensor]]", ".clone()")
    assert codes(fixed) == []
    safe = run(fixed)
    assert not hazard["out"].equal(safe["out"])  # type: ignore[attr-defined]


def test_open_ended_or_non_tensor_positions_stay_unknown() -> None:
    for annotation in ("tuple[torch.Tensor, ...]", "tuple[int, int]", "list[torch.Tensor]"):
        assert codes(_program(annotation)) == []

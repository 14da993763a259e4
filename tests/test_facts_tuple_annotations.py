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


STATES = """
import torch
from typing import Optional, Tuple


def replace_states(
    src: Tuple[torch.Tensor, torch.Tensor],
    dst: Tuple[torch.Tensor, torch.Tensor],
    mask: torch.Tensor,
    other_src: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
):
    other = other_src if other_src is not None else dst
    torch.where(mask, src[0], other[0], out=dst[0])
    torch.where(mask, src[1], other[{index}], out=dst[1])


mask = torch.tensor([True, False, True])
h = torch.zeros(3), torch.full((3,), 2.0)
replace_states((torch.ones(3), torch.ones(3)), h, mask)
"""


def test_a_read_of_another_position_is_not_stale() -> None:
    # NeMo's batch_replace_states_mask: ``dst[0]`` written, then ``other[1]`` read
    safe = STATES.format(index=1)
    assert codes(safe) == []
    assert run(safe)["h"][1].tolist() == [1.0, 2.0, 1.0]  # type: ignore[index]
    hazard = STATES.format(index=0)  # ``other[0]`` is ``dst[0]``, already replaced
    assert codes(hazard) == [(13, "IPL002")]
    assert run(hazard)["h"][1].tolist() == [1.0, 0.0, 1.0]  # type: ignore[index]


COORDS = """
import torch
from torch import nn


class RoPE(nn.Module):
    def coords(self, n: int, scale: tuple[torch.Tensor, float]) -> torch.Tensor:
        grid = torch.arange(n, dtype=torch.float32).repeat(2, 1)
        grid[0:1] = grid[0:1] * scale[0]
        grid[1:2] = grid[1:2] * scale[1]
        return grid


grid = RoPE().coords(4, (torch.tensor(0.5), 2.0))
"""


def test_a_tensor_position_is_not_taken_to_require_grad() -> None:
    # diffusers' LTX rope: a scale tensor beside floats multiplies slices of a fresh grid
    assert codes(COORDS) == []
    assert run(COORDS)["grid"].tolist() == [[0.0, 0.5, 1.0, 1.5], [0.0, 2.0, 4.0, 6.0]]  # type: ignore[attr-defined]

"""The views ``unbind``, ``chunk`` and ``split`` return cannot be written in place with grad on.

Autograd gives the views one call returns a single backward node, which cannot account for an
in-place write to one of them, so torch raises at the write itself ("... is a view and is
being modified inplace. This view is the output of a function that returns multiple views").
Which ops do this comes from torch (the generator's ``multi_view`` key): ``tensor_split``
returns separate views and allows the write. Every program here was run with torch.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from programs import behave, codes, run

#: the start of what torch says when one of the views is written
MULTIPLE_VIEWS = "returns multiple views"
TABLE = Path(__file__).resolve().parent.parent / "inplace_lint" / "data" / "torch_ops.json"

PROGRAM = """
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x):
        q, k, v = self.qkv(x){split}
        {write}
        return (q @ k.transpose(-1, -2)).softmax(-1) @ v


Attention()(torch.randn(2, 4, 8)).sum().backward()
"""

HAZARDS = [
    (".chunk(3, dim=-1)", "q *= 0.5"),
    (".split(8, dim=-1)", "q.mul_(0.5)"),
    (".view(2, 4, 3, 8).unbind(2)", "q[0] = 0.0"),
]
LOOK_ALIKES = [
    (".tensor_split(3, dim=-1)", "q *= 0.5"),  # separate views: allowed
    (".chunk(3, dim=-1)", "q = q * 0.5"),  # out of place
    (".chunk(3, dim=-1)", "q = q.clone()\n        q *= 0.5"),  # a copy
]


def _program(split: str, write: str) -> str:
    return textwrap.dedent(PROGRAM).format(split=split, write=write)


@pytest.mark.parametrize(("split", "write"), HAZARDS)
def test_writing_one_of_several_views(split: str, write: str) -> None:
    assert codes(_program(split, write)) == [(13, "IPL001")]


@pytest.mark.parametrize(("split", "write"), LOOK_ALIKES)
def test_look_alikes_stay_quiet(split: str, write: str) -> None:
    assert codes(_program(split, write)) == []


def test_views_taken_in_a_loop_over_unbind() -> None:
    source = textwrap.dedent(
        """
        import torch


        def denormalize(img, mean, std):
            for t, m, s in zip(img.unbind(0), mean, std):
                t.mul_(s).add_(m)
            return img


        w = torch.randn(3, 4, 4, requires_grad=True)
        denormalize(w * 1, [0.5] * 3, [0.2] * 3)
        """
    )
    assert codes(source) == [(7, "IPL001")]
    behave(source, match=MULTIPLE_VIEWS)


def test_the_programs_behave_as_labelled() -> None:
    for split, write in HAZARDS:
        behave(_program(split, write), match=MULTIPLE_VIEWS)
    for split, write in LOOK_ALIKES:
        run(_program(split, write))


def test_the_table_names_the_ops_torch_refuses() -> None:
    table = json.loads(TABLE.read_text())
    for section, prefix in (("functions", "torch."), ("methods", "")):
        multi = {name for name, entry in table[section].items() if entry.get("multi_view")}
        assert {f"{prefix}unbind", f"{prefix}chunk", f"{prefix}split"} <= multi
        assert f"{prefix}tensor_split" not in multi
        assert f"{prefix}transpose" not in multi

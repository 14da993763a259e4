"""Which methods may hand back their receiver, from the op table (``ops.maybe_self_methods``).

``x.float()``, ``x.to(dtype)``, ``x.contiguous()`` return ``x`` itself in some configurations
and a copy in others: a soft alias. ``x.view_as(y)`` and ``x.expand_as(y)`` always return a
view (the table's ``view_methods``), so a later read through them is a read of the written
tensor; the hand-typed list had taken them for soft aliases. Run under torch.
"""

from __future__ import annotations

import pytest

from inplace_lint.facts.ops import load_table, maybe_self_methods
from tests.programs import codes, run

ALIAS = """
import torch

torch.manual_seed(0)
h = torch.randn(2, 3)
ref = torch.zeros(6)
flat = h.METHOD
h.mul_(2)
total = flat.sum()
"""


def test_the_generated_soft_aliases() -> None:
    soft = maybe_self_methods()
    assert {"float", "double", "to", "contiguous", "type_as", "cpu", "cuda"} <= soft
    assert not soft & load_table().view_methods  # ``view_as`` is a view, not a soft alias


@pytest.mark.parametrize(("method", "stale"), [("view_as(ref)", True), ("double()", False)])
def test_a_view_as_alias_is_read_stale(method: str, stale: bool) -> None:
    source = ALIAS.replace("METHOD", method)
    line = source.splitlines().index("h.mul_(2)") + 1
    assert codes(source) == ([(line, "IPL002")] if stale else [])
    old = float(torch_sum(source.replace("h.mul_(2)\n", "")))
    assert (float(torch_sum(source)) != old) is stale


def torch_sum(source: str) -> object:
    return run(source)["total"]

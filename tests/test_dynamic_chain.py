"""Raising writes behind the first one (``dynamic/chain.py``, issue 16 item 7): each is
confirmed at its line, by running again with the ones found so far out of the way. Each
program runs under real torch through ``confirm``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from inplace_lint.dynamic.core import check
from inplace_lint.dynamic.runner import skip_lines
from inplace_lint.dynamic.targets import subject_for


def _confirmed(folder: Path, source: str) -> set[tuple[int, str]]:
    path = folder / "case.py"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return {(c.site.line, c.code) for c in check(subject_for(str(path))).confirmed}


LEAVES = """
import torch
import torch.nn as nn

conv = nn.Conv2d(2, 2, 1)
w = torch.randn(2, 2, 1, 1)
conv.weight[:, :] = w
conv.bias[:] = 0.5
out = conv(torch.randn(1, 2, 3, 3)).sum()
"""

SAME_LEAF = """
import torch

emb = torch.randn(4, 3, requires_grad=True)
pos = torch.randn(4, 3)
emb += pos
emb += pos
out = emb.sum()
"""


def test_each_write_to_a_different_leaf_is_confirmed(tmp_path: Path) -> None:
    assert _confirmed(tmp_path, LEAVES) == {(6, "IPL003"), (7, "IPL003")}


def test_a_second_write_to_the_same_leaf_is_not_a_second_hazard(tmp_path: Path) -> None:
    assert _confirmed(tmp_path, SAME_LEAF) == {(5, "IPL003")}


TWO_STEPS = """
import torch
import torch.nn as nn

torch.manual_seed(0)
a1, a2, b1, b2 = (nn.Linear(3, 3) for _ in range(4))
opt_a = torch.optim.SGD(a2.parameters(), lr=0.1)
opt_b = torch.optim.SGD(b2.parameters(), lr=0.1)
x = torch.randn(4, 3)
y1 = a2(a1(x)).sum()
y2 = b2(b1(x)).sum()
y1.backward(retain_graph=True)
y2.backward(retain_graph=True)
opt_a.step()
y1.backward()
opt_b.step()
y2.backward()
"""


def test_a_second_optimizer_step_before_a_backward_is_confirmed_too(tmp_path: Path) -> None:
    assert _confirmed(tmp_path, TWO_STEPS) == {(13, "IPL001"), (15, "IPL001")}


def test_skip_lines_keeps_line_numbers_and_skips_what_would_not_compile() -> None:
    source = "import torch\nopt.step()\nif x:\n    y = 2\n"
    skipped = skip_lines(source, frozenset({2, 3}))
    assert skipped.splitlines() == ["import torch", "pass", "if x:", "    y = 2"]


def test_a_twin_that_draws_other_random_numbers_is_not_compared() -> None:
    """On CUDA an in-place dropout draws its mask by another kernel than the out-of-place
    one: the twin's values differ for that reason alone (round 9's 3DETR look-alike)."""
    import torch

    from inplace_lint.dynamic.reference import Reference, judge_twin
    from inplace_lint.dynamic.runner import Outcome, rng_state

    torch.manual_seed(0)
    reference = Reference([{"y": torch.zeros(3)}], rng_state())
    torch.rand(4)  # the twin drew more
    twin = Outcome(values={"y": torch.ones(3)}, rng=rng_state())
    found = judge_twin(reference, twin, lambda: twin)
    assert found is not None and found.other_draws and not found.differs
    same = Outcome(values={"y": torch.ones(3)}, rng=reference.rng)
    found = judge_twin(reference, same, lambda: same)
    assert found is not None and found.differs

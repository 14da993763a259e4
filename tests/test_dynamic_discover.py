"""Pass C: in-place statements no static finding sits on, found by flipping them (issue 16).

Each program is run with real torch by ``confirm``; each asserts what is confirmed, where, with
which code, and by which pass. The hazards are shapes the static pass does not flag (a write
whose source overlaps its destination, a helper writing its caller's batch through an alias
it was handed inside a tuple, which the caller then feeds to a graph); the safe programs are
intended updates whose twins differ on purpose (an EMA teacher, a hand-written SGD step, a
mask a helper fills for its caller that no graph reads).
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from inplace_lint.dynamic.core import check
from inplace_lint.dynamic.runner import no_grad_lines
from inplace_lint.dynamic.targets import subject_for
from inplace_lint.dynamic.written import written_at


def _confirmed(folder: Path, source: str, codes: list[str] | None = None) -> set[tuple]:
    path = folder / "case.py"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    report = check(subject_for(str(path)), codes=codes)
    return {(c.site.line, c.code, c.how) for c in report.confirmed}


OVERLAP = """
import torch

def to_relative(traj):
    traj -= traj[:, :1]
    return traj

full = torch.cumsum(torch.randn(3, 5, 2), dim=1)
obs = full.clone()
rel = to_relative(obs)
"""


def test_a_write_that_reads_what_it_overwrites_is_a_stale_read(tmp_path: Path) -> None:
    assert _confirmed(tmp_path, OVERLAP) == {(4, "IPL002", "pass C")}


CALLER_BATCH = """
import torch

def normalize(*args):
    x = args[0][0]
    x[:, :2] = x[:, :2] * 2 - 1
    return x.sum()

weight = torch.randn(3, requires_grad=True)
batch = torch.rand(4, 3)
first = normalize((batch, None))
loss = (batch @ weight).sum()
loss.backward()
"""


def test_a_helper_writing_a_tensor_it_was_called_with_is_ipl004(tmp_path: Path) -> None:
    assert _confirmed(tmp_path, CALLER_BATCH) == {(5, "IPL004", "pass C")}


def test_pass_c_reports_only_the_codes_selected(tmp_path: Path) -> None:
    assert _confirmed(tmp_path, CALLER_BATCH, codes=["IPL002"]) == set()


FILLED_FOR_THE_CALLER = """
import torch

def mark(mask, top):
    mask[top : top + 2] = 1
    return mask.sum()

mask = torch.zeros(6, dtype=torch.int)
counts = [mark(mask, top) for top in (0, 3)]
total = mask.float().sum()
"""

EMA = """
import copy
import torch
import torch.nn as nn

model = nn.Linear(3, 2)
ema = copy.deepcopy(model)
for p in ema.parameters():
    p.requires_grad_(False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(4, 3)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    for e, p in zip(ema.parameters(), model.parameters()):
        e.data.mul_(0.9).add_(p.data, alpha=0.1)
    with torch.no_grad():
        teacher = ema(x)
"""

MANUAL_SGD = """
import torch

w = torch.randn(3, requires_grad=True)
x = torch.randn(8, 3)
for step in range(3):
    loss = (x @ w).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
"""


@pytest.mark.parametrize("source", [EMA, MANUAL_SGD], ids=["ema", "manual-sgd"])
def test_intended_updates_and_writes_no_graph_reads_are_not_confirmed(
    tmp_path: Path, source: str
) -> None:
    assert _confirmed(tmp_path, source) == set()


def test_pass_c_leaves_a_buffer_filled_for_the_caller(tmp_path: Path) -> None:
    """Pass C does not confirm the fill (its values reach no graph). The static pass sees
    the helper call inside the comprehension, as it sees it in a loop, and reports IPL004:
    the helper does change the caller's mask, so pass B confirms that finding's twin."""
    confirmed = _confirmed(tmp_path, FILLED_FOR_THE_CALLER)
    assert {how for _, _, how in confirmed} <= {"twin"}


def test_no_grad_lines_keeps_line_numbers_and_skips_what_would_not_compile() -> None:
    source = "import torch\nx = 1\nif x: y = 2\n"
    guarded = no_grad_lines(source, frozenset({2, 3}))
    assert guarded.splitlines()[1] == 'with __import__("torch").no_grad(): x = 1'
    assert guarded.splitlines()[2] == "if x: y = 2"


def test_what_a_statement_writes_is_read_from_its_text() -> None:
    tree = ast.parse(
        textwrap.dedent(
            """
            class Clip(torch.autograd.Function):
                @staticmethod
                def backward(ctx, grad_output):
                    grad_output[grad_output > 1] = 0
                    return grad_output

            def step(batch, lr):
                images = batch["images"]
                images.data.mul_(lr)
            """
        )
    )
    in_backward = written_at(tree, 5)
    assert in_backward.in_function and in_backward.argument and in_backward.place == "grad_output"
    through = written_at(tree, 10)
    assert through.root == "images" and through.through_data and through.argument
    made = ast.parse("drop = nn.Dropout(0.1, inplace=True)\nact = nn.ReLU(inplace=True)\n")
    assert written_at(made, 1).random_flag and not written_at(made, 2).random_flag

"""The dynamic checker must not be wrong in ways that cost trust (issue 16, items 1-4 and 7).

Each test reproduces one way the checker was wrong: a crash hidden by pass A (tensor
subclasses), state that outlives a run, nondeterminism, argument mutations refuted, and the
smaller ones (graph ids, exit codes, keyword inputs, one failing unpack of several,
inconclusive results, script targets that cannot show a silent hazard).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

pytest.importorskip("torch")

import torch
from torch import nn

from inplace_lint.dynamic import confirm
from inplace_lint.dynamic.core import check
from inplace_lint.dynamic.graph import write_graphs
from inplace_lint.dynamic.pytest_plugin import assert_no_inplace_hazards
from inplace_lint.dynamic.runner import ObjectSubject, run
from inplace_lint.dynamic.targets import subject_for

INCONCLUSIVE, NOT_CONFIRMED = "inconclusive", "not confirmed"


def _line(text: str) -> int:
    """The line of this file that holds ``text``."""
    lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    (number,) = [
        n
        for n, line in enumerate(lines, 1)
        if text in line and "_line(" not in line and "_status(" not in line
    ]
    return number


def _status(report: object, text: str) -> object:
    line = _line(text)
    (found,) = [s for s in report.statuses if s.finding.line == line]  # type: ignore[attr-defined]
    return found


def _write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- 1. subclasses


class Tagged(torch.Tensor):
    """A plain tensor subclass, as ``torchvision.tv_tensors.Image`` is."""


def _subclass_step() -> torch.Tensor:
    x = torch.randn(4, requires_grad=True)
    y = torch.sigmoid(x.as_subclass(Tagged))
    y.mul_(2)
    y.sum().backward()
    return x.grad


def test_a_subclass_saved_tensor_still_fails_backward() -> None:
    """Plain torch raises here; under pass A the run must raise too, and say where."""
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _subclass_step()
    outcome = run(ObjectSubject(_subclass_step, (), None), detect=True)
    assert isinstance(outcome.error, RuntimeError)
    report = confirm(_subclass_step)
    (hit,) = report.confirmed
    assert (hit.kind, hit.how) == ("raises", "pass A")
    assert hit.site.line == _line("y.mul_(2)")


# --------------------------------------------------------------------------- 2. state


MODEL = nn.Linear(4, 4)
OPTIMIZER = torch.optim.SGD(MODEL.parameters(), lr=0.1, momentum=0.9)


def _step_on_a_built_model() -> list[torch.Tensor]:
    x = torch.randn(3, 4)
    v = x[0]
    x.add_(0.0)  # flagged (IPL002: v reads the old value), harmless: adds zero (built model)
    out = MODEL(x) + v.sum()
    out.sum().backward()
    OPTIMIZER.step()
    return [p.grad for p in MODEL.parameters()] + [out]


def test_state_of_a_built_model_does_not_outlive_a_run() -> None:
    before = [p.detach().clone() for p in MODEL.parameters()]
    report = confirm(_step_on_a_built_model)
    assert report.ok, report.text()
    status = _status(report, "adds zero (built model)")
    assert status.status == NOT_CONFIRMED and "matches" in status.detail  # type: ignore[attr-defined]
    for param, value in zip(MODEL.parameters(), before, strict=True):
        assert torch.equal(param, value) and param.grad is None
    assert not OPTIMIZER.state


def test_a_model_built_when_a_helper_module_is_imported(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "trust_helper_model.py",
        """
        import torch

        model = torch.nn.Linear(4, 4)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
        """,
    )
    script = _write(
        tmp_path,
        "train.py",
        """
        import torch
        from trust_helper_model import model, optimizer

        x = torch.randn(3, 4)
        v = x[0]
        x.add_(0.0)
        out = model(x) + v.sum()
        out.sum().backward()
        optimizer.step()
        weight = model.weight
        """,
    )
    try:
        report = check(subject_for(str(script)))
    finally:
        sys.modules.pop("trust_helper_model", None)
    assert report.ok, report.text()
    assert [s.status for s in report.statuses] == [NOT_CONFIRMED]


# --------------------------------------------------------------------------- 3. noise


NOISE = torch.Generator()


class Noisy(nn.Module):
    """A kernel whose low bits change from run to run (as GPU atomics do)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        jitter = torch.rand(h.shape, generator=NOISE.manual_seed(int.from_bytes(os.urandom(4))))
        h = h + 1e-3 * jitter
        v = h[0]
        h.add_(0.0)  # flagged (IPL002), harmless (noisy)
        return h * 2 + v.sum()


def test_noise_within_the_run_to_run_spread_confirms_nothing() -> None:
    report = confirm(Noisy(), torch.randn(5, 8))
    assert report.ok, report.text()
    status = _status(report, "harmless (noisy)")
    assert status.status == NOT_CONFIRMED and "run-to-run noise" in status.detail  # type: ignore[attr-defined]


def test_runs_use_deterministic_kernels_and_put_the_setting_back() -> None:
    src, index = torch.randn(50_000, 4), torch.randint(0, 3, (50_000,))
    seen: list[bool] = []

    def step() -> torch.Tensor:
        seen.append(torch.are_deterministic_algorithms_enabled())
        return torch.zeros(3, 4).index_put_((index,), src, accumulate=True)

    subject = ObjectSubject(step, (), None)
    first, second = run(subject).values, run(subject).values
    assert seen == [True, True]
    assert torch.equal(first["result[0]"], second["result[0]"])
    assert not torch.are_deterministic_algorithms_enabled()


PAD_AS_ON_CUDA = """
import torch
import torch.nn.functional as F


def pad(x):
    # as torch's F.pad(mode="replicate") does on CUDA: with deterministic algorithms on, a
    # decomposition by indexing, whose backward needs no values of x
    if torch.are_deterministic_algorithms_enabled():
        return x[..., torch.tensor([0, 0, 1, 2, 3, 3])]
    return F.pad(x, (1, 1), mode="replicate")


x = torch.rand(1, 1, 4, requires_grad=True)
border = x * 1
padded = pad(border)
border.mul_(2)
padded.sum().backward()
"""


def test_whether_a_program_raises_is_judged_as_the_user_runs_it(tmp_path: Path) -> None:
    """kornia's distance transform on CUDA (round 16): under deterministic algorithms
    ``F.pad`` saves nothing, so the write that makes the program fail went unseen and
    ``confirm`` said the twin matched. Pass A runs with the user's setting."""
    script = _write(tmp_path, "pad.py", PAD_AS_ON_CUDA)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        exec(compile(script.read_text(), str(script), "exec"), {})
    report = check(subject_for(str(script)))
    assert [(c.site.line, c.how) for c in report.confirmed] == [(16, "pass A")]
    assert not torch.are_deterministic_algorithms_enabled()


STALE_BUFFER = """
import torch

torch.manual_seed(0)
w = torch.randn(4, requires_grad=True)
buf = torch.full((4,), float("nan"))  # a reused buffer's old contents (``torch.empty``)
x = torch.randn(4)
buf.copy_(x)
loss = (w * buf).sum()
loss.backward()
"""


def test_a_copy_into_a_buffer_of_nans_is_not_confirmed(tmp_path: Path) -> None:
    """Round 28's static input buffer: the twin of ``buf.copy_(x)`` was ``buf * 0 + x``,
    NaN where the buffer held NaN, so a ``copy_`` that never reads the old values was
    "confirmed". The twin now takes ``x`` in the buffer's shape and dtype."""
    script = _write(tmp_path, "stale_buffer.py", STALE_BUFFER)
    report = check(subject_for(str(script)))
    assert report.confirmed == []


# --------------------------------------------------------------------------- 4. arguments


class ClampsLabels(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = self.fc(x)
        labels.clamp_min_(0)  # the caller's padding (-100) is gone
        return nn.functional.cross_entropy(logits, labels)


def test_a_model_that_writes_its_inputs_is_confirmed_and_keyword_inputs_work() -> None:
    labels = torch.tensor([0, -100, 2, 1, -100])
    report = confirm(ClampsLabels(), torch.randn(5, 4), labels=labels, loss=lambda out: out)
    (hit,) = report.confirmed
    assert hit.code == "IPL004" and hit.kind == "silent"
    assert "'input[1]['labels'] (after the run)' at [1] is -100 in the twin" in hit.evidence
    assert labels[1] == -100  # the caller's tensor is untouched (inputs are cloned)
    with pytest.raises(pytest.fail.Exception, match="IPL004 confirmed"):
        assert_no_inplace_hazards(
            ClampsLabels(), torch.randn(5, 4), labels=labels, loss=lambda out: out
        )


# --------------------------------------------------------------------------- 7. smaller ones


THREE_WRITES = """
import torch

x = torch.randn(4, requires_grad=True)
a = torch.sigmoid(x)
b = torch.tanh(x)
c = torch.exp(x)
a.mul_(2)
b.mul_(2)
c.mul_(2)
(a + b + c).sum().backward()
"""


def test_pass_a_reports_every_failing_unpack(tmp_path: Path) -> None:
    script = _write(tmp_path, "three.py", THREE_WRITES)
    report = check(subject_for(str(script)))
    assert sorted((c.site.line, c.how) for c in report.confirmed) == [
        (7, "pass A"),
        (8, "pass A"),
        (9, "pass A"),
    ]
    assert "saved by tanh at line 5" in report.confirmed[1].evidence


def test_a_script_without_module_level_tensors_is_inconclusive(tmp_path: Path) -> None:
    script = _write(
        tmp_path,
        "main_style.py",
        """
        import torch


        def main():
            a = torch.randn(5, requires_grad=True)
            h = torch.sigmoid(a)
            h.data.mul_(2)
            h.sum().backward()


        if __name__ == "__main__":
            main()
        """,
    )
    report = check(subject_for(str(script)), codes=["IPL007"])
    assert report.confirmed  # pass A still sees the silent write
    silent = _write(
        tmp_path,
        "stale.py",
        """
        import torch


        def main():
            x = torch.randn(3)
            v = x[0]
            x.mul_(2)
            return v * x


        if __name__ == "__main__":
            main()
        """,
    )
    report = check(subject_for(str(silent)))
    (status,) = report.statuses
    assert status.status == INCONCLUSIVE and report.inconclusive == [status]
    assert "::name target" in status.detail
    assert re.search(r"stale\.py:7:5: IPL002 inconclusive \(ran; nothing to compare", status.line())


def test_graphs_of_several_targets_keep_their_own_nodes(tmp_path: Path) -> None:
    first = _write(tmp_path, "one.py", THREE_WRITES)
    second = _write(tmp_path, "two.py", THREE_WRITES)
    reports = [check(subject_for(str(p)), graph=True) for p in (first, second)]
    out = tmp_path / "g.dot"
    write_graphs(reports, str(out))
    clusters = re.findall(r'subgraph "(cluster_[^"]+)"', out.read_text())
    assert len(clusters) == 6 and len(set(clusters)) == 6


def test_cli_a_confirmed_hazard_beside_a_bad_target_exits_1(tmp_path: Path) -> None:
    _write(tmp_path, "three.py", THREE_WRITES)
    result = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "confirm", "three.py", "missing.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert result.returncode == 1, result.stderr
    assert "three.py:7:1: IPL001 confirmed" in result.stdout
    assert result.stderr.strip() == "inplace-lint: error: missing.py: no such file"


ROWS_ZEROED = """
import torch

x = torch.randn(2, 4, requires_grad=True)
att = torch.relu(x * 2)
att[:, 0] = 0
att[:, -1] = 0
out = x + att * x
out.sum().backward()
"""


def test_every_write_to_one_saved_tensor_is_reported(tmp_path: Path) -> None:
    report = check(subject_for(str(_write(tmp_path, "rows.py", ROWS_ZEROED))))
    assert sorted(c.site.line for c in report.confirmed) == [5, 6]


TOGETHER = """
import torch


class Scaled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ga, gb = torch.ones_like(a), torch.ones_like(b)
        ctx.save_for_backward(ga, gb)
        return a.sum() + b.sum()

    @staticmethod
    def backward(ctx, grad):
        ga, gb = ctx.saved_tensors
        ga *= grad
        gb *= grad
        return ga, gb


a = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
loss = Scaled.apply(a, b)
loss.backward(retain_graph=True)
loss.backward()
"""


def test_sites_that_raise_only_together_are_confirmed(tmp_path: Path) -> None:
    """A second backward trips over both writes; flipping one alone still raises."""
    report = check(subject_for(str(_write(tmp_path, "together.py", TOGETHER))))
    assert sorted((c.site.line, c.code) for c in report.confirmed) == [
        (14, "IPL005"),
        (15, "IPL005"),
    ]


# --------------------------------------------------------------------------- custom Functions


class _ZeroSavedInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def, override]
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad):  # type: ignore[no-untyped-def, override]
        (x,) = ctx.saved_tensors
        x.zero_()  # writes exp's saved output from inside backward
        return grad * 2


class _ExpThenFunction(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.exp(x * self.w)
        return _ZeroSavedInput.apply(y) + y


def test_a_write_in_a_custom_backward_is_reported_under_ipl005() -> None:
    """Pass A sees the write as autograd runs the Function's backward: the rule for writes in
    a custom Function's backward (IPL005) owns it, not the generic IPL001."""
    report = confirm(_ExpThenFunction(), torch.randn(3, 4))
    line = _line("x.zero_()  # writes exp's saved output")
    assert [(c.site.line, c.code) for c in report.confirmed] == [(line, "IPL005")]


# --------------------------------------------------------------------------- CUDA threads


def test_a_shallow_stack_is_no_user_site_and_no_error() -> None:
    """On CUDA, autograd runs backward in its own device thread: a stack of a few frames,
    where looking further up than it goes raised ValueError inside every dispatched op."""
    from inplace_lint.dynamic import sites

    found: list[object] = []
    thread = threading.Thread(target=lambda: found.append(sites.called_from_user(40)))
    thread.start()
    thread.join()
    assert found == [False]


DISJOINT_SLOT = """
import torch

torch.manual_seed(0)
q = torch.randn(2, 1, 3, requires_grad=True)
cache = torch.zeros(2, 6, 3)
cache.data[:, 0:4] = torch.randn(2, 4, 3)
keys = cache[:, :4]
out = (q @ keys.transpose(-2, -1)).sum()
cache.data[:, 4:6] = 1.0
out.backward()
grad = q.grad
"""


def test_a_write_beside_a_saved_view_is_no_silent_write(tmp_path: Path) -> None:
    """``keys`` (rows 0-3 of each batch) was saved by the batched matmul; the write fills rows
    4-5, which lie inside the byte range ``keys`` spans (batch 0's rows 4-5) but hold none of
    its elements. Pass A once took the range for the elements and confirmed a silent write
    (delta-iris's KV cache, round 15)."""
    report = check(subject_for(str(_write(tmp_path, "slot.py", DISJOINT_SLOT))))
    assert report.confirmed == []
    cache = torch.zeros(2, 6, 3)
    keys = cache[:, :4]
    saved = keys.clone()
    cache.data[:, 4:6] = 1.0
    assert torch.equal(keys, saved)  # the saved elements really are untouched


# --------------------------------------------------------------------------- torch.func
def test_a_target_using_torch_func_is_judged_by_its_twins(tmp_path: Path) -> None:
    """torch.func refuses pass A's saved-tensor hooks ('don't yet support saved tensor
    hooks'); the run is judged without pass A instead of stopping as bad input (round 20's
    nerfstudio scene contraction)."""
    script = _write(
        tmp_path,
        "contraction.py",
        """
        import torch
        from torch.func import jacrev, vmap


        def contract(x):
            mag = x.norm(dim=-1, keepdim=True)
            return torch.where(mag < 1, x, (2 - 1 / mag) * (x / mag))


        def covariance(means, cov):
            jac = vmap(jacrev(contract))(means)
            cov *= 2.0
            return jac @ cov @ jac.transpose(-1, -2)


        means = torch.randn(4, 3)
        cov = torch.eye(3).expand(4, 3, 3).clone()
        kept = cov
        out = covariance(means, cov)
        result = out.sum() + kept.sum()
        """,
    )
    hooks = torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
    with pytest.raises(RuntimeError, match="saved tensor hooks"), hooks:
        torch.func.grad(lambda x: (x * x).sum())(torch.randn(3))
    report = check(subject_for(str(script)))
    assert any("torch.func" in note for note in report.notes)
    assert [c.site.line for c in report.confirmed] == [12]

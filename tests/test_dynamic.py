"""The dynamic checker (``inplace-lint confirm``) against the catalogue and bad input."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

import torch
from cli_runner import in_process
from harness import Example, all_examples, catalogue_examples

from inplace_lint.checks import all_rules
from inplace_lint.dynamic import confirm
from inplace_lint.dynamic.core import check
from inplace_lint.dynamic.runner import BadInput
from inplace_lint.dynamic.targets import subject_for

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = catalogue_examples(ROOT)
CASES = [e for e in all_examples(ROOT) if e.origin.startswith("tests/")]
ALL_CODES = [rule.code for rule in all_rules()]
#: Static misses recorded as strict xfails in test_examples_static.py: no candidate to flip.
STATIC_MISSES = {
    "tests/cases/ipl006/saliency_dict_target_relu_.py",
}
#: Hazards the dynamic checker cannot confirm, with the reason.
UNCONFIRMABLE = {
    "tests/cases/ipl001/adversarial_input_clamp_grad.py": (
        "torch raises that the grad target is not in the graph; the out-of-place flip "
        "(x_adv = x_adv.clamp(...)) raises the same, so no flip shows the write is the cause"
    ),
}

#: Hazards the dynamic checker confirms on another line than the marked one, with the reason.
CONFIRMED_AT = {
    "tests/cases/ipl001/sam_first_step_before_backward_of_kept_graph.py": (
        {(22, "IPL001")},
        "the write that breaks backward runs inside the same-file optimizer's first_step(); "
        "the marker and the static finding are on the call that moves the weights",
    ),
}


def _sampled(cases: list[Example]) -> list[Example]:
    """One case in three, and every case named above: ``tools/confirm_score.py`` scores all
    of them (``bench/DYNAMIC.md``: 344/347 on CPU, 348/351 on CUDA), and the whole set here
    would be a fifth of the suite, which CI runs within 5 minutes on 2 cores."""
    named = STATIC_MISSES | set(UNCONFIRMABLE) | set(CONFIRMED_AT)
    return [c for i, c in enumerate(cases) if i % 3 == 0 or c.origin in named]


def _confirmed(example: Example, tmp_path: Path) -> set[tuple[int, str]]:
    script = tmp_path / "example.py"
    script.write_text(example.source, encoding="utf-8")
    report = check(subject_for(str(script)), codes=ALL_CODES)
    assert all(c.site.path == str(script) for c in report.confirmed), report.text()
    return {(c.site.line, c.code) for c in report.confirmed}


@pytest.mark.parametrize("example", CATALOGUE, ids=[e.origin for e in CATALOGUE])
def test_catalogue_example(example: Example, tmp_path: Path) -> None:
    """Hazards are confirmed on exactly their marked lines; safe examples on none."""
    if not example.twin and "ctx.mark_dirty(" in example.source:
        pytest.xfail(
            "the write is declared with ctx.mark_dirty: its out-of-place flip leaves mark_dirty "
            "naming a tensor that is no input, which torch refuses, so no flip isolates it"
        )
    expected = example.expected if example.label == "hazard" else set()
    assert _confirmed(example, tmp_path) == expected


@pytest.mark.parametrize("example", _sampled(CASES), ids=[e.origin for e in _sampled(CASES)])
def test_case_file(example: Example, tmp_path: Path) -> None:
    if example.origin in STATIC_MISSES:
        pytest.xfail("the static linter misses it, so pass B has no site to flip")
    if example.origin in UNCONFIRMABLE:
        with pytest.raises(BadInput, match="no in-place cause"):
            _confirmed(example, tmp_path)
        pytest.xfail(UNCONFIRMABLE[example.origin])
    expected = example.expected if example.label == "hazard" else set()
    if example.origin in CONFIRMED_AT:
        expected = CONFIRMED_AT[example.origin][0]
    assert _confirmed(example, tmp_path) == expected


class Gated(torch.nn.Module):
    def __init__(self, inplace: bool) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.act = torch.nn.ReLU(inplace=inplace)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.fc(x))
        return self.act(h) * 2


def test_api_confirms_a_model_and_clears_the_safe_one() -> None:
    report = confirm(Gated(inplace=True), torch.randn(3, 4))
    assert not report.ok
    (hit,) = report.confirmed
    assert hit.code == "IPL001" and hit.kind == "raises"
    assert hit.site.path == os.path.abspath(__file__)
    assert "tanh" in hit.evidence
    assert confirm(Gated(inplace=False), torch.randn(3, 4)).ok


def test_api_confirms_a_silent_data_write() -> None:
    def step() -> tuple[torch.Tensor, torch.Tensor]:
        a = torch.randn(5, requires_grad=True)
        h = torch.sigmoid(a)
        h.data.mul_(2)
        h.sum().backward()
        return h, a.grad

    report = confirm(step)
    (hit,) = report.confirmed
    assert hit.kind == "silent" and hit.code == "IPL007"


def test_fixture_helper() -> None:
    from inplace_lint.dynamic.pytest_plugin import assert_no_inplace_hazards

    assert_no_inplace_hazards(Gated(inplace=False), torch.randn(2, 4))
    with pytest.raises(pytest.fail.Exception, match="IPL001 confirmed"):
        assert_no_inplace_hazards(Gated(inplace=True), torch.randn(2, 4))


BUILD = """\
import torch
from torch import nn


class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        h = self.act(h)
        return h.sum(dim=1)


def build():
    return Gated(), torch.randn(3, 4)


def safe():
    return nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True), nn.Linear(4, 1)), torch.randn(2, 4)


def broken():
    raise ValueError("no weights file")


def wrong_shape():
    return nn.Linear(4, 2), torch.randn(3, 5)
"""


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inplace_lint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def test_cli_confirm(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(BUILD, encoding="utf-8")
    found = _cli("confirm", "models.py::build", "--graph", "g.dot", cwd=tmp_path)
    assert found.returncode == 1, found.stderr
    lines = found.stdout.splitlines()
    assert lines[0].startswith("models.py:13:13: IPL001 confirmed: aten.relu_ wrote"), lines
    assert "models.py:13:13: IPL001 confirmed (pass A)" in lines
    assert "digraph" in (tmp_path / "g.dot").read_text()
    assert found.stderr == ""
    clean = _cli("confirm", "models.py::safe", cwd=tmp_path)
    assert clean.returncode == 0, clean
    assert clean.stdout == "models.py:13:13: IPL001 not reached\n"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("models.py::broken", "ValueError: no weights file"),
        ("models.py::wrong_shape", "mat1 and mat2 shapes cannot be multiplied"),
        ("models.py::missing", "has no attribute 'missing'"),
        ("nowhere.py::build", "no such file"),
        ("no_such_package.mod:build", "cannot import no_such_package.mod"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path, target: str, message: str) -> None:
    """In process (tests/cli_runner.py); the first target also in a real process, whose exit
    status and streams are what a user sees."""
    (tmp_path / "models.py").write_text(BUILD, encoding="utf-8")
    code, out, err = in_process(tmp_path, ["confirm", target], env={"PYTHONWARNINGS": "ignore"})
    if target == "models.py::broken":
        result = _cli("confirm", target, cwd=tmp_path)
        assert (result.returncode, result.stdout, result.stderr) == (
            code,
            out.decode(),
            err.decode(),
        )
    assert code == 2
    assert out == b""
    (line,) = err.decode().splitlines()
    assert line.startswith("inplace-lint: error: ") and message in line


def test_cli_unimportable_module_target(tmp_path: Path) -> None:
    (tmp_path / "broken_mod.py").write_text("import torch\nraise ImportError('no cuda')\n")
    result = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "confirm", "broken_mod:build"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONWARNINGS": "ignore"},
    )
    assert result.returncode == 2
    assert "importing the target raised ImportError: no cuda" in result.stderr
    assert "Traceback" not in result.stderr


def test_confirm_help_says_it_runs_user_code() -> None:
    result = _cli("confirm", "--help", cwd=ROOT)
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "only inplace-lint command that executes user code" in text


def test_statuses_for_static_findings(tmp_path: Path) -> None:
    source = textwrap.dedent(
        """
        import torch

        def step():
            a = torch.randn(3, requires_grad=True)
            h = a * 2
            h.relu_()
            if False:
                x = a.sigmoid()
                x.mul_(2)
                x.sum().backward()
            h.sum().backward()
            return a.grad
        """
    )
    (tmp_path / "s.py").write_text(source, encoding="utf-8")
    report = check(subject_for(str(tmp_path / "s.py") + "::step"))
    assert report.ok
    assert [s.status for s in report.statuses] == ["not reached"]


def test_bad_input_from_api() -> None:
    with pytest.raises(BadInput, match="shapes cannot be multiplied"):
        confirm(torch.nn.Linear(4, 2), torch.randn(3, 5))


def test_pytest_fixture_via_conftest(pytester: pytest.Pytester) -> None:
    """A real pytest session (in process, pytester's) whose conftest names the plugin."""
    tmp_path = pytester.path
    (tmp_path / "conftest.py").write_text(
        'pytest_plugins = ["inplace_lint.dynamic.pytest_plugin"]\n'
    )
    (tmp_path / "test_model.py").write_text(
        textwrap.dedent(
            """
            import torch

            def test_safe(no_inplace_hazards):
                no_inplace_hazards(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU()),
                                   torch.randn(2, 3))

            def test_hazard(no_inplace_hazards):
                model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Sigmoid(),
                                            torch.nn.ReLU(inplace=True))
                no_inplace_hazards(model, torch.randn(2, 3))
            """
        )
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", str(tmp_path))
    out = result.stdout.str()
    assert "1 failed, 1 passed" in out, out
    assert "IPL001 confirmed" in out


CUDNN_ONLY = """
import torch

w = torch.randn(3, requires_grad=True)
h = torch.sigmoid(w)
log_probs = torch.zeros(2, 1, 3)
targets = torch.zeros(1, 2, dtype=torch.int)
loss = torch.ops.aten._cudnn_ctc_loss(log_probs, targets, [2], [2], 0, True, False)[0]
(loss.sum() + h.sum()).backward()
"""


def test_an_op_with_no_kernel_here_is_bad_input_not_a_hazard(tmp_path: Path) -> None:
    """An op with no kernel for the device raises ``NotImplementedError`` whose message lists
    torch's dispatch keys, ``ADInplaceOrView`` among them (round 35's ART case on CUDA, whose
    input stays on the CPU): the program cannot run here, which no in-place write explains."""
    script = tmp_path / "cudnn_only.py"
    script.write_text(CUDNN_ONLY, encoding="utf-8")
    with pytest.raises(NotImplementedError, match="ADInplaceOrView"):
        exec(compile(CUDNN_ONLY, str(script), "exec"), {})
    with pytest.raises(BadInput, match="no in-place cause"):
        check(subject_for(str(script)), codes=ALL_CODES)

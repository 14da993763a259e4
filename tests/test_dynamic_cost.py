"""What ``confirm`` costs and how it is bounded: only files the run reached are linted (through
the static cache), ``--timeout``, ``--device``, the progress line."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

import torch

from inplace_lint.dynamic import command
from inplace_lint.dynamic.core import check
from inplace_lint.dynamic.device import DeviceError, on_device, onto_device, resolve
from inplace_lint.dynamic.limits import TargetTimeout
from inplace_lint.dynamic.progress import Progress
from inplace_lint.dynamic.targets import subject_for

ROOT = Path(__file__).resolve().parent.parent

#: A library that registers itself at import time and holds a hazard nothing runs.
REGISTRY = """\
import torch

NAMES = []


def register(function):
    NAMES.append(function.__name__)
    return function


def never_called():
    x = torch.randn(3, requires_grad=True)
    y = torch.exp(x)
    y.mul_(2)
    y.sum().backward()
"""
LIBRARY = """\
import torch

import registry

BIAS = torch.zeros(3)
BIAS.add_(1)  # import-time work: not part of the run


@registry.register
def scale(x):
    out = torch.exp(x)
    return out * 2


def unused():
    x = torch.randn(3, requires_grad=True)
    y = torch.exp(x)
    y.add_(1)
    y.sum().backward()
"""
TARGET = """\
import torch

import library


def step():
    x = torch.randn(4, 3, requires_grad=True)
    y = library.scale(x)
    y.sum().backward()
    return y, x
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reach")
    for name, text in (("registry", REGISTRY), ("library", LIBRARY), ("target", TARGET)):
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    return folder


def _forget(*names: str) -> None:
    for name in names:
        sys.modules.pop(name, None)


def test_only_files_with_a_reached_line_are_linted(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    _forget("library", "registry")
    report = check(subject_for(str(project / "target.py") + "::step"))
    names = sorted(Path(f).name for f in report.files)
    assert names == ["library.py", "target.py"], report.files  # registry.py ran only at import
    paths = {Path(s.finding.path).name for s in report.statuses}
    assert "registry.py" not in paths
    assert [(Path(s.finding.path).name, s.status) for s in report.statuses] == [
        ("library.py", "not reached")  # unused(): in a reached file, never called
    ]
    entries = list((project / ".inplace-lint-cache").glob("v*/*.json"))
    assert len(entries) == 2, "each linted file has a static cache entry"
    _forget("library", "registry")


def test_timeout_stops_a_target_and_restores_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "loop.py").write_text(
        "import torch\n\ndef step():\n    x = torch.ones(2)\n    while True:\n        x = x + 0\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    handler = signal.getsignal(signal.SIGALRM)
    with pytest.raises(TargetTimeout, match=r"timed out after 0\.3 s"):
        check(subject_for(str(tmp_path / "loop.py") + "::step"), timeout=0.3)
    assert sys.gettrace() is None
    assert signal.getsignal(signal.SIGALRM) is handler
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_timeout_on_the_command_line(tmp_path: Path) -> None:
    """One real process: the message, the exit code, no traceback."""
    (tmp_path / "loop.py").write_text(
        "import torch\nx = torch.ones(2)\nwhile True:\n    x = x + 0\n", encoding="utf-8"
    )
    (tmp_path / "pyproject.toml").write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "confirm", "--timeout", "0.5", "loop.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "inplace-lint: error: loop.py: timed out after 0.5 s (--timeout 0.5); "
        "nothing is reported for it"
    )
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--timeout", "0"], "--timeout: must be a positive number of seconds: '0'"),
        (["--timeout", "soon"], "--timeout: not a number of seconds: 'soon'"),
        (["--device", "warp"], "--device warp: not a torch device"),
    ],
)
def test_bad_options(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert command.main([*argv, "x.py"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message without CUDA")
def test_device_cuda_without_cuda(capsys: pytest.CaptureFixture[str]) -> None:
    assert command.main(["--device", "cuda", "x.py"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("inplace-lint: error: --device cuda: CUDA is not available: ")
    assert err.count("\n") == 1
    with pytest.raises(DeviceError):
        resolve("cuda:0")


def test_device_scope_moves_what_a_build_returns() -> None:
    device = resolve("cpu")
    assert onto_device(torch.ones(1)) is not None  # outside the scope: unchanged
    with on_device(torch.device("meta")):
        leaf = torch.ones(2, requires_grad=True, device="cpu")
        model, (moved,) = onto_device((torch.nn.Linear(2, 2, device="cpu"), (leaf,)))
        assert torch.empty(1).device.type == "meta"  # factories follow the scope
        assert model.weight.device.type == "meta" and moved.device.type == "meta"
        assert moved.is_leaf and moved.requires_grad
    assert torch.empty(1).device == device


def test_device_cpu_still_confirms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "hazard.py").write_text(
        textwrap.dedent(
            """
            import torch

            def build():
                model = torch.nn.Sequential(
                    torch.nn.Linear(3, 3), torch.nn.Sigmoid(), torch.nn.ReLU(inplace=True)
                )
                return model, torch.randn(2, 3)
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    report = check(subject_for("hazard.py::build"), device=torch.device("cpu"))
    assert [c.site.line for c in report.confirmed] == [6], report.text()


def test_progress_line_is_drawn_and_erased() -> None:
    stream = io.StringIO()
    progress = Progress("t.py", enabled=False, stream=stream)
    progress.phase("twin 1/3 at t.py:4")
    progress._draw()
    assert stream.getvalue().startswith("\r\x1b[Kinplace-lint confirm: t.py: twin 1/3 at t.py:4 (")
    progress.close()
    assert stream.getvalue().endswith("\r\x1b[K")
    quiet = io.StringIO()
    Progress("t.py", enabled=False, stream=quiet).close()
    assert quiet.getvalue() == ""


#: a target whose run ends in the error torch raises after a CUDA kernel's device-side
#: assert (``torch.AcceleratorError``), then one with a real hazard
LOST = """\
import torch


def broken():
    raise torch.AcceleratorError("CUDA error: device-side assert triggered\\nmore advice")


def fine():
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()
"""


def test_targets_after_a_lost_cuda_context_are_named_not_run(tmp_path: Path) -> None:
    # after a device-side assert every CUDA call of the process fails: the later targets
    # would each report the same error as if it were theirs
    (tmp_path / "lost.py").write_text(LOST)
    targets = ["lost.py::fine", "lost.py::broken", "lost.py::fine", "lost.py::fine"]
    result = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "confirm", *targets],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1  # the first target's hazard is confirmed
    assert "IPL001 confirmed" in result.stdout
    errors = result.stderr.strip().splitlines()
    assert errors[0].startswith("inplace-lint: error: lost.py::broken: the run raised ")
    assert "AcceleratorError: CUDA error: device-side assert triggered" in errors[0]
    assert errors[1] == (
        "inplace-lint: error: lost.py::broken left the CUDA context unusable (a device-side "
        "error), so 2 more target(s) are not run: lost.py::fine, lost.py::fine; run them in "
        "a new process"
    )
    assert len(errors) == 2

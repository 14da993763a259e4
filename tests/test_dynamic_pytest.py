"""``pytest --inplace-confirm``: every test under pass A, confirmed hazards listed at the end."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

SUITE = """\
import torch


def test_silent_data_write():
    w = torch.randn(3, 3, requires_grad=True)
    y = torch.sigmoid(torch.randn(2, 3) @ w)
    y.data.mul_(2)  # backward silently uses the doubled output
    y.sum().backward()


def test_safe():
    w = torch.randn(3, 3, requires_grad=True)
    (torch.randn(2, 3) @ w).relu().sum().backward()


def test_without_autograd():
    assert torch.ones(2).sum() == 2
"""


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("suite")
    (folder / "test_hazards_here.py").write_text(SUITE, encoding="utf-8")
    (folder / "pyproject.toml").write_text("")  # rootdir and the static cache stay here
    return folder


def _pytest(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            *options,
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_report_lists_the_hazard_and_keeps_outcomes(suite: Path) -> None:
    """A real pytest process with the installed plugin (the pytest11 entry point)."""
    done = _pytest(suite, "--inplace-confirm")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "3 passed" in out
    assert "inplace-lint: 1 confirmed in-place hazard(s)" in out
    line = next(x for x in out.splitlines() if "confirmed:" in x)
    assert line.startswith("test_hazards_here.py:7:5: IPL007 confirmed: aten.mul_ wrote")
    assert line.endswith("[test_hazards_here.py::test_silent_data_write]")
    assert "(3 test(s) ran under pass A, 2 saved tensors for backward)" in out


def test_fail_mode_fails_the_test_that_hit(
    suite: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In process: a nested pytest run with ``--inplace-confirm=fail``."""
    monkeypatch.chdir(suite)
    code = pytest.main(
        ["-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--inplace-confirm=fail", str(suite)]
    )
    out = capsys.readouterr().out
    assert code == pytest.ExitCode.TESTS_FAILED, out
    assert "1 failed, 2 passed" in out
    assert "FAILED test_hazards_here.py::test_silent_data_write" in out
    assert "inplace-lint confirmed in-place hazards:" in out
    sys.modules.pop("test_hazards_here", None)


def test_off_by_default_and_bad_values_are_usage_errors(
    suite: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(suite)
    args = ["-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--collect-only", str(suite)]
    assert pytest.main(args) == pytest.ExitCode.OK
    assert "inplace-lint" not in capsys.readouterr().out
    assert pytest.main([*args, "--inplace-confirm=maybe"]) == pytest.ExitCode.USAGE_ERROR
    assert "ignored explicit argument 'maybe'" in capsys.readouterr().err
    sys.modules.pop("test_hazards_here", None)


def test_documented_in_the_plugin_and_the_guide() -> None:
    root = Path(__file__).resolve().parent.parent
    guide = (root / "docs" / "dynamic-checker.md").read_text(encoding="utf-8")
    assert "--inplace-confirm=fail" in guide
    from inplace_lint.dynamic import pytest_plugin

    assert "--inplace-confirm" in textwrap.dedent(pytest_plugin.__doc__ or "")

"""Hostile input: huge, long, deep, looping, blocking and unreadable files, broken configuration.

Each gets one clear line, the run goes on with the other files, and nothing hangs. Extends
tests/test_cli.py (null bytes, symlink loops, folders named *.py, permission errors as a normal
user) and tests/test_config.py (broken TOML).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from inplace_lint.autofix import fix_file
from inplace_lint.budget import Budget, OverBudget
from inplace_lint.config import Config
from inplace_lint.engine import FileResult, lint_path, lint_source

HAZARD = (
    "import torch\na = torch.randn(4, requires_grad=True)\nh = torch.sigmoid(a)\n"
    "h.mul_(2)\nh.sum().backward()\n"
)
OK_LINE = "h.py:4:1: IPL001"


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None, **kw: object) -> tuple:
    """Run the command; returns (exit code, stdout lines, stderr lines, seconds)."""
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        **kw,  # type: ignore[arg-type]
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return (
        proc.returncode,
        proc.stdout.splitlines(),
        proc.stderr.splitlines(),
        time.monotonic() - started,
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "h.py").write_text(HAZARD, encoding="utf-8")
    return tmp_path


def test_a_50_mb_file_is_refused_by_its_size(work: Path) -> None:
    with open(work / "big.py", "wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    code, out, err, seconds = cli(work, ".")
    assert code == 2 and err == []
    assert out[0] == "big.py:1:1: IPL999 cannot parse: file too large (52428800 bytes)"
    assert out[1].startswith(OK_LINE)
    assert seconds < 60


def test_one_very_long_line(work: Path) -> None:
    """A 2 MB line (a string literal and a few hundred statements) is analysed, not choked on."""
    statements = "; ".join(f"y{i} = h * {i}" for i in range(300))
    line = f"import torch; s = '{'x' * 2_000_000}'; {statements}\n"
    (work / "long.py").write_text(line, encoding="utf-8")
    code, out, err, seconds = cli(work, ".")
    assert (code, err) == (1, []) and out[0].startswith(OK_LINE)
    assert seconds < 60


@pytest.mark.parametrize(
    "text",
    [
        "x.add_(" + "[" * 5000 + "]" * 5000 + ")\n",
        "x.add_(" + "-" * 100_000 + "1)\n",
        "x.add_(" + " + ".join(["1"] * 100_000) + ")\n",
        "y = " + "x." * 20_000 + "add_(1)\n",
        "".join("    " * i + "if x:\n" for i in range(99)) + "    " * 99 + "x.add_(1)\n",
        "f = " + "lambda: " * 3000 + "x.add_(1)\n",
        'x.add_(f"{' * 200 + "1" + '}"' * 200 + ")\n",
    ],
    ids=["brackets", "unary", "sum", "attributes", "blocks", "lambdas", "fstrings"],
)
def test_deep_nesting_is_one_finding_or_none(text: str) -> None:
    """Deep trees: IPL999 or an ordinary result, never a RecursionError or a crash."""
    source = "import torch\nx = torch.randn(3, requires_grad=True)\n" + text
    started = time.monotonic()
    findings = lint_source(source, "deep.py")
    assert time.monotonic() - started < 30
    assert all(f.code.startswith("IPL") for f in findings)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifos_and_devices_named_py_do_not_block(work: Path) -> None:
    os.mkfifo(work / "pipe.py")
    (work / "zero.py").symlink_to("/dev/zero")
    code, out, err, _ = cli(work, ".")
    assert code == 2 and out[0].startswith(OK_LINE)
    assert out[1:] == ["Found 1 finding (1 fixable with --fix) and 2 errors."]
    assert sorted(err) == [
        "inplace-lint: error: cannot read pipe.py: not a regular file",
        "inplace-lint: error: cannot read zero.py: not a regular file",
    ]
    code, out, err, _ = cli(work, "--fix", "pipe.py", "h.py")
    assert code == 2 and "inplace-lint: error: cannot read pipe.py: not a regular file" in err


def test_fix_in_a_folder_named_like_a_file(work: Path) -> None:
    (work / "pkg.py").mkdir()
    (work / "pkg.py" / "m.py").write_text(HAZARD, encoding="utf-8")
    code, out, _, _ = cli(work, "--fix", "pkg.py")
    assert (code, out) == (0, ["Found 1 finding (1 fixed, 0 remaining)."])
    assert "h = h.mul(2)" in (work / "pkg.py" / "m.py").read_text(encoding="utf-8")


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to drop to nobody"
)
def test_unreadable_files_when_started_as_root() -> None:
    """Root reads every file, so run as `nobody` to see a permission error as users do."""
    root = Path(tempfile.mkdtemp())
    try:
        root.chmod(0o755)
        (root / "pyproject.toml").write_text("", encoding="utf-8")
        (root / "h.py").write_text(HAZARD, encoding="utf-8")
        (root / "locked.py").write_text(HAZARD, encoding="utf-8")
        (root / "locked.py").chmod(0)
        for path in (root / "h.py", root / "pyproject.toml"):
            path.chmod(0o644)

        def drop() -> None:
            os.setgid(65534)
            os.setuid(65534)

        try:
            code, out, err, _ = cli(root, ".", env={"HOME": str(root)}, preexec_fn=drop)
        except PermissionError:
            pytest.skip("cannot run as nobody here")
        if any("No module named" in line for line in err):
            pytest.skip("nobody cannot import the package here")
        assert code == 2 and out[0].startswith(OK_LINE)
        assert err == ["inplace-lint: error: cannot read locked.py: Permission denied"]
    finally:
        for path in root.iterdir():
            path.chmod(0o644)
            path.unlink()
        root.rmdir()


def test_unreadable_file_in_process(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whoever runs the tests (root too): a read that fails is one error, the rest goes on."""
    (work / "locked.py").write_text(HAZARD, encoding="utf-8")
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.py":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    config = Config()
    locked = lint_path(work / "locked.py", "locked.py", config)
    assert locked == FileResult("locked.py", (), "cannot read locked.py: Permission denied")
    assert [f.code for f in lint_path(work / "h.py", "h.py", config).findings] == ["IPL001"]
    outcome = fix_file(work / "locked.py", "locked.py")
    assert outcome.error == "cannot read locked.py: Permission denied" and not outcome.written


@pytest.mark.parametrize(
    "toml",
    [
        '[tool.inplace-lint\nselect = ["IPL001"]\n',
        '[tool.inplace-lint]\nselect = "IPL001"\n',
        "[tool.inplace-lint]\nselect = [1, 2]\n",
        "[tool.inplace-lint]\nexclude = 3\n",
        '[tool.inplace-lint]\nper-file-ignores = ["x"]\n',
        '[tool.inplace-lint.per-file-ignores]\n"*.py" = 5\n',
        "[tool.inplace-lint]\nselect = ['IPL001'\n",
        "\x00\x01\x02 binary",
        "\ufeff[tool.inplace-lint]\nselect = ['IPL001']\n",
        "[tool]\ninplace-lint = 1\n",
    ],
    ids=lambda t: repr(t[:30]),
)
def test_broken_configuration_is_one_line(work: Path, toml: str) -> None:
    (work / "pyproject.toml").write_text(toml, encoding="utf-8")
    code, out, err, _ = cli(work, "h.py")
    assert code in (1, 2)
    if code == 2:
        assert out == [] and len(err) == 1 and err[0].startswith("inplace-lint: error: ")
    else:
        assert out[0].startswith(OK_LINE)


# --------------------------------------------------------------------------- the time budget


def test_a_file_over_the_time_budget_is_ipl999_and_the_run_goes_on(work: Path) -> None:
    slow = "import torch\nh = torch.sigmoid(torch.randn(3, requires_grad=True))\n"
    slow += "".join(f"y{i} = h * {i}\n" for i in range(20000)) + "h.mul_(2)\n"
    (work / "slow.py").write_text(slow, encoding="utf-8")
    budget = {"INPLACE_LINT_TIME_BUDGET": "0.2"}
    code, out, err, seconds = cli(work, "--jobs", "1", ".", env=budget)
    assert (code, err) == (2, [])
    assert out[0].startswith(OK_LINE)
    assert out[1] == "slow.py:1:1: IPL999 cannot parse: took more than 0.2 s of CPU time to analyse"
    assert seconds < 60


def test_budget_is_inert_off_the_main_thread_and_restores_handlers() -> None:
    def previous(signum: int, frame: object) -> None:
        raise AssertionError("never called")

    old = signal.signal(signal.SIGVTALRM, previous)
    try:
        assert not Budget(0.001).start().active  # someone else's handler: left alone
    finally:
        signal.signal(signal.SIGVTALRM, old)
    budget = Budget(5).start()
    assert budget.active and signal.getitimer(signal.ITIMER_VIRTUAL)[0] > 0
    budget.stop()
    assert signal.getitimer(signal.ITIMER_VIRTUAL)[0] == 0
    assert signal.getsignal(signal.SIGVTALRM) == old
    seen: list[list[str]] = []
    thread = threading.Thread(target=lambda: seen.append([f.code for f in lint_source(HAZARD)]))
    os.environ["INPLACE_LINT_TIME_BUDGET"] = "0.000001"
    try:
        thread.start()
        thread.join()
    finally:
        del os.environ["INPLACE_LINT_TIME_BUDGET"]
    assert seen == [["IPL001"]]


def test_budget_expiry_raises_over_budget() -> None:
    budget = Budget(0.01).start()
    try:
        with pytest.raises(OverBudget):
            while True:  # the budget counts CPU time, so spend some
                sum(range(1000))
    finally:
        budget.stop()

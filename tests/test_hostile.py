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


DEEP = {
    "brackets": "x.add_(" + "[" * 5000 + "]" * 5000 + ")\n",
    "unary": "x.add_(" + "-" * 100_000 + "1)\n",
    "sum": "x.add_(" + " + ".join(["1"] * 100_000) + ")\n",
    "attributes": "y = " + "x." * 20_000 + "add_(1)\n",
    "lambdas": "f = " + "lambda: " * 3000 + "x.add_(1)\n",
    "fstrings": 'x.add_(f"{' * 200 + "1" + '}"' * 200 + ")\n",
}


@pytest.mark.parametrize("text", DEEP.values(), ids=DEEP.keys())
def test_deep_nesting_is_one_ipl999_not_a_crash(text: str) -> None:
    """Too deep for the parser: one IPL999 on the line (or at 1:1 where the parser gives up
    without a place; its reason varies with the Python version), never a RecursionError."""
    source = "import torch\nx = torch.randn(3, requires_grad=True)\n" + text
    started = time.monotonic()
    (finding,) = lint_source(source, "deep.py")
    assert time.monotonic() - started < 30
    assert finding.code == "IPL999" and finding.message.startswith("cannot parse: ")
    assert finding.line in (1, 3), finding


def test_deeply_nested_blocks_are_analysed() -> None:
    """99 nested `if` blocks parse: the leaf write inside them is found where it is."""
    blocks = "".join("    " * i + "if x:\n" for i in range(99)) + "    " * 99 + "x.add_(1)\n"
    source = "import torch\nx = torch.randn(3, requires_grad=True)\n" + blocks
    assert [(f.line, f.column, f.code) for f in lint_source(source, "deep.py")] == [
        (102, 397, "IPL003")
    ]


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


#: Broken configuration and the end of its one error line (after ``PATH: ``).
BROKEN = {
    '[tool.inplace-lint\nselect = ["IPL001"]\n': "invalid TOML: ",
    '[tool.inplace-lint]\nselect = "IPL001"\n': (
        "[tool.inplace-lint] select must be a list of strings, got 'IPL001'"
    ),
    "[tool.inplace-lint]\nselect = [1, 2]\n": (
        "[tool.inplace-lint] select must be a list of strings, got [1, 2]"
    ),
    "[tool.inplace-lint]\nexclude = 3\n": (
        "[tool.inplace-lint] exclude must be a list of strings, got 3"
    ),
    '[tool.inplace-lint]\nper-file-ignores = ["x"]\n': (
        "[tool.inplace-lint] per-file-ignores must be a table of pattern = [codes]"
    ),
    '[tool.inplace-lint.per-file-ignores]\n"*.py" = 5\n': (
        "[tool.inplace-lint] per-file-ignores.'*.py' must be a list of codes"
    ),
    "[tool.inplace-lint]\nselect = ['IPL001'\n": "invalid TOML: ",
    "\x00\x01\x02 binary": "invalid TOML: ",
    "\ufeff[tool.inplace-lint]\nselect = ['IPL001']\n": "invalid TOML: ",
    "[tool]\ninplace-lint = 1\n": "[tool.inplace-lint] must be a table",
}


@pytest.mark.parametrize(("toml", "reason"), BROKEN.items(), ids=lambda t: repr(t[:30]))
def test_broken_configuration_is_one_line_and_exit_2(work: Path, toml: str, reason: str) -> None:
    """Exit 2, nothing linted, one line naming the file and what is wrong (TOML syntax errors
    end with tomllib's own words and place, which vary with the Python version)."""
    (work / "pyproject.toml").write_text(toml, encoding="utf-8")
    code, out, err, _ = cli(work, "h.py")
    assert (code, out, len(err)) == (2, [], 1), err
    prefix = f"inplace-lint: error: {work / 'pyproject.toml'}: "
    if reason == "invalid TOML: ":
        assert err[0].startswith(prefix + reason) and err[0].endswith(")"), err
    else:
        assert err[0] == prefix + reason


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

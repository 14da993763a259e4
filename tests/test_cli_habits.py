"""The command-line habits a ruff or flake8 user brings, each through the real process.

No path lints ``.``; every subcommand answers ``-h``; ``-V``; the summary line that ends a text
report; ``--quiet``; ``--output-file`` (written atomically); ``--color`` with ``NO_COLOR`` and
``FORCE_COLOR``; progress on a terminal (a real pseudo-terminal) and nowhere else;
``--force-exclude``. The pre-commit hook that passes ``--force-exclude`` is run for real in
``test_precommit.py``.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cli_runner import write

from inplace_lint import __version__

SIGMOID = "import torch\na = torch.randn(4, requires_grad=True)\nh = torch.sigmoid(a)\n"
#: IPL001 on line 4 with a safe fix.
HAZARD = SIGMOID + "h.mul_(2)\nh.sum().backward()\n"
#: IPL001 on line 5 whose fix is unsafe (``keep`` shares the tensor).
STALE = SIGMOID + "keep = h\nh.mul_(2)\n(keep + h).sum().backward()\n"
#: IPL003 on line 3: no fix.
#: A finding no fix is offered for: moving the write is the author's call.
NOFIX = (
    "import torch\nlin = torch.nn.Linear(2, 1)\nout = lin(torch.randn(3, 2))\n"
    "lin.weight.data.mul_(0.5)\nout.sum().backward()\n"
)
CLEAN = "import torch\nx = torch.randn(4)\nx.add_(1)\n"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: Environment variables that would change colour or progress; each test sets its own.
SCRUBBED = ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "CI", "TERM")


@dataclass(frozen=True)
class Result:
    rc: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update(extra or {})
    return env


def run(cwd: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> Result:
    """``python -m inplace_lint ARGS`` in ``cwd`` with pipes; fail on any traceback."""
    if args and args[0] in ("rules", "rule", "lsp", "confirm"):
        argv = list(args)
    else:  # --no-cache goes after the command word, which must come first
        head = ["check"] if args[:1] == ("check",) else []
        argv = [*head, "--no-cache", *args[len(head) :]]
    proc = subprocess.run(
        [sys.executable, "-m", "inplace_lint", *argv],
        cwd=cwd,
        input=stdin.encode(),
        capture_output=True,
        timeout=120,
        env=_env(env),
    )
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert "Traceback" not in err and "Traceback" not in out, err
    return Result(proc.returncode, out, err)


def run_all(cwd: Path, argvs: Sequence[Sequence[str]]) -> list[Result]:
    """Several independent runs side by side (the start-up cost dominates)."""
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        return list(pool.map(lambda argv: run(cwd, *argv), argvs))


def run_on_terminal(
    cwd: Path, args: Sequence[str], stream: str, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """Run with ``stream`` ("stdout" or "stderr") on a pseudo-terminal, the other on a pipe.

    Returns (exit code, what the terminal showed, what the pipe got).
    """
    master, slave = pty.openpty()
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, stream: slave}
    proc = subprocess.Popen(
        [sys.executable, "-m", "inplace_lint", "--no-cache", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        env=_env({"TERM": "xterm-256color", **(env or {})}),
        **pipes,  # type: ignore[arg-type]
    )
    os.close(slave)
    shown = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal's other end has closed it
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    other = proc.stderr if stream == "stdout" else proc.stdout
    assert other is not None
    piped = other.read().decode()
    rc = proc.wait(timeout=120)
    reader.join(timeout=30)
    os.close(master)
    text = shown.decode().replace("\r\n", "\n")  # the terminal's line discipline adds \r
    assert "Traceback" not in text + piped
    return rc, text, piped


def test_no_path_lints_the_current_folder(work: Path) -> None:
    """As ruff: no PATH lints `.`; --stdin-filename alone reads standard input."""
    write(work, {"h.py": HAZARD, "pkg/m.py": HAZARD, "build/skip.py": HAZARD})
    bare = run(work)
    named = run(work, "check")
    assert (bare.rc, bare.err) == (1, "")
    assert [line.split(" ")[0] for line in bare.lines[:-1]] == ["h.py:4:1:", "pkg/m.py:4:1:"]
    assert named.out == bare.out == run(work, ".").out
    piped = run(work, "--stdin-filename", "new.py", stdin=STALE)
    assert piped.rc == 1 and piped.lines[0].startswith("new.py:5:1: IPL001 ")


def test_every_subcommand_answers_help(work: Path) -> None:
    """`-h` of the tool lists every command; each command's `-h` prints help and exits 0."""
    argvs = [["-h"], ["check", "-h"], ["rules", "-h"], ["rule", "--help"], ["lsp", "-h"]]
    argvs += [["confirm", "-h"], ["rule", "IPL001", "-h"], ["-V"], ["--version"]]
    top, check, rules, rule, lsp, confirm, rule_code, short, long = run_all(work, argvs)
    for result in (top, check, rules, rule, lsp, confirm, rule_code):
        assert (result.rc, result.err) == (0, ""), result
    assert top.out == check.out and top.out.startswith("usage: inplace-lint [check]")
    commands = top.out.split("\ncommands:\n", 1)[1]
    listed = re.findall(r"^  (\S+)", commands, re.MULTILINE)
    assert listed == ["check", "rules", "rule", "lsp", "confirm"]
    for option in ("--output-file", "--color", "--quiet", "--force-exclude", "--version"):
        assert option in top.out, option
    assert rules.out.startswith("usage: inplace-lint rules\n")
    assert rule.out.startswith("usage: inplace-lint rule CODE\n") and rule_code.out == rule.out
    assert lsp.out.startswith("usage: inplace-lint lsp\n")  # and no server was started
    assert confirm.out.startswith("usage: inplace-lint confirm")
    assert short == long == Result(0, f"inplace-lint {__version__}\n", "")


def test_the_summary_line_ends_a_text_report(work: Path) -> None:
    """ruff's closing line, counting the fixes --fix and --unsafe-fixes would apply."""
    write(work, {"h.py": HAZARD, "s.py": STALE, "nofix.py": NOFIX, "clean.py": CLEAN})
    argvs = [["h.py", "s.py"], ["--unsafe-fixes", "h.py", "s.py"], ["s.py"], ["nofix.py"]]
    argvs += [["clean.py"], ["clean.py", "nope.py"], ["-q", "h.py"], ["--statistics", "."]]
    both, unsafe, stale, nofix, clean, missing, quiet, stats = run_all(work, argvs)
    assert both.lines[-1] == "Found 2 findings (1 fixable with --fix, 1 more with --unsafe-fixes)."
    assert unsafe.lines[-1] == "Found 2 findings (2 fixable with --fix --unsafe-fixes)."
    assert stale.lines[-1] == "Found 1 finding (1 fixable with --fix --unsafe-fixes)."
    assert (nofix.rc, nofix.lines[-1]) == (1, "Found 1 finding.")
    assert (clean.rc, clean.out, clean.err) == (0, "All checks passed!\n", "")
    assert (missing.rc, missing.out) == (2, "Found 0 findings and 1 error.\n")
    assert missing.err == "inplace-lint: error: path does not exist: nope.py\n"
    assert (quiet.rc, quiet.err) == (1, "") and quiet.lines[0].startswith("h.py:4:1: IPL001 ")
    assert len(quiet.lines) == 1  # --quiet: the findings, nothing else
    assert stats.lines[-3:] == [
        "2     IPL001 saved-for-backward",
        "1     IPL007 data-bypass",
        "Found 3 findings (1 fixable with --fix, 1 more with --unsafe-fixes).",
    ]


def test_the_summary_after_fix_and_diff_and_never_in_machine_formats(work: Path) -> None:
    """--fix counts what it fixed; --diff keeps stdout a patch; JSON and SARIF stay parseable."""
    write(work, {"h.py": HAZARD, "s.py": STALE})
    diff = run(work, "--diff", ".")
    assert diff.rc == 1 and diff.out.startswith("--- a/h.py\n+++ b/h.py\n")
    assert diff.out.endswith("+h = h.mul(2)\n h.sum().backward()\n")
    assert diff.err == "Would fix 1 finding (1 more with --unsafe-fixes).\n"
    assert run(work, "--diff", "-q", ".").err == ""
    for fmt in ("json", "sarif", "lsp", "github"):
        machine = run(work, "--format", fmt, ".")
        assert machine.rc == 1 and machine.err == "", fmt
        assert not re.search(r"^(Found \d|All checks passed)", machine.out, re.M), fmt
        if fmt != "github":
            json.loads(machine.out)
    fixed = run(work, "--fix", ".")
    assert fixed.rc == 1 and fixed.err == ""
    assert fixed.lines[0].startswith("s.py:5:1: IPL001 ")
    assert fixed.lines[1:] == [
        "Found 2 findings (1 fixed, 1 remaining, 1 fixable with --unsafe-fixes)."
    ]
    rest = run(work, "--fix", "--unsafe-fixes", ".")
    assert (rest.rc, rest.out, rest.err) == (0, "Found 1 finding (1 fixed, 0 remaining).\n", "")
    assert run(work, "--fix", ".").out == "All checks passed!\n"
    as_json = run(work, "--fix", "--format", "json", "--output-file", "r.json", "s.py")
    assert (as_json.rc, as_json.out, as_json.err) == (0, "", "")


def test_output_file_is_written_atomically_and_errors_stay_on_stderr(work: Path) -> None:
    """The report goes to the file (replaced in one step); stdout stays empty, stderr has errors."""
    write(work, {"h.py": HAZARD})
    report = work / "reports" / "lint.txt"
    first = run(work, "--output-file", str(report), "h.py", "nope.py")
    assert (first.rc, first.out) == (2, "")
    assert first.err == "inplace-lint: error: path does not exist: nope.py\n"
    text = report.read_text(encoding="utf-8").splitlines()
    assert text[0].startswith("h.py:4:1: IPL001 ")
    assert text[1:] == ["Found 1 finding (1 fixable with --fix) and 1 error."]
    # An existing report is replaced by a rename: a hard link to it keeps the old text, the
    # file keeps its mode, and no temporary file is left behind.
    report.chmod(0o640)
    os.link(report, work / "old.txt")
    as_json = run(work, "--output-file", str(report), "--format", "json", "--color", "always")
    assert (as_json.rc, as_json.out, as_json.err) == (1, "", "")
    assert [f["code"] for f in json.loads(report.read_text(encoding="utf-8"))] == ["IPL001"]
    assert (work / "old.txt").read_text(encoding="utf-8").splitlines() == text
    assert oct(report.stat().st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in report.parent.iterdir()) == ["lint.txt"]
    # Never coloured, even when asked (as ruff); a folder is refused before any work.
    run(work, "--output-file", str(report), "--color", "always", "h.py")
    assert not ANSI.search(report.read_text(encoding="utf-8"))
    folder = run(work, "--output-file", str(work), "h.py")
    assert (folder.rc, folder.out) == (2, "")
    assert folder.err.startswith("inplace-lint: error: cannot write --output-file ")
    assert len(folder.err.splitlines()) == 1


def test_color_follows_the_option_the_environment_and_the_terminal(work: Path) -> None:
    """--color always/never decide; auto: FORCE_COLOR, then NO_COLOR, then is stdout a tty."""
    write(work, {"h.py": HAZARD})
    piped: list[tuple[list[str], dict[str, str]]] = [
        ([], {}),  # a pipe: auto means no colour
        (["--color", "always"], {}),
        (["--color", "never"], {"FORCE_COLOR": "1"}),
        ([], {"FORCE_COLOR": "1"}),
        ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}),  # ruff's order: FORCE_COLOR wins
        (["--color", "auto"], {"NO_COLOR": "1", "FORCE_COLOR": ""}),  # empty means unset
        (["--format", "json", "--color", "always"], {}),  # colour is for text only
    ]
    terminal: list[tuple[list[str], dict[str, str]]] = [
        ([], {}),
        ([], {"NO_COLOR": "1"}),
        (["--color", "never"], {}),
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:
        pipes = list(pool.map(lambda case: run(work, *case[0], "h.py", env=case[1]), piped))
        ttys = list(
            pool.map(
                lambda case: run_on_terminal(work, [*case[0], "h.py"], "stdout", case[1]), terminal
            )
        )
    plain = pipes[0]
    assert plain.rc == 1 and not ANSI.search(plain.out + plain.err)
    assert [bool(ANSI.search(r.out)) for r in pipes] == [
        False,
        True,
        False,
        True,
        True,
        False,
        False,
    ]
    for result in pipes[:-1]:
        assert result.rc == 1 and ANSI.sub("", result.out) == plain.out
    assert [rc for rc, _, _ in ttys] == [1, 1, 1]
    assert [bool(ANSI.search(shown)) for _, shown, _ in ttys] == [True, False, False]
    assert all(ANSI.sub("", shown) == plain.out for _, shown, _ in ttys)


def test_progress_only_on_a_terminal_and_never_in_ci_or_quiet(work: Path) -> None:
    """A long run (over 200 files) counts files on a terminal's stderr, then erases the line."""
    write(work, {f"m{i:03}.py": "import torch\n" for i in range(229)})  # screened out: quick
    write(work, {"h.py": HAZARD})
    args = ["--jobs", "2", "."]
    rc, shown, out = run_on_terminal(work, args, "stderr")
    assert rc == 1 and out.splitlines()[0].startswith("h.py:4:1: IPL001 ")
    counts = re.findall(r"\rinplace-lint: (\d+)/230 files", shown)
    assert counts and all(0 < int(n) <= 230 for n in counts), shown
    assert shown.endswith("\r\x1b[K")  # erased before the report is read
    quiet: list[tuple[list[str], dict[str, str]]] = [(["-q"], {}), ([], {"CI": "true"})]
    quiet.append(([], {"TERM": "dumb"}))
    with ThreadPoolExecutor(max_workers=4) as pool:
        silent = list(
            pool.map(
                lambda case: run_on_terminal(work, [*case[0], *args], "stderr", case[1]), quiet
            )
        )
        piped = pool.submit(run, work, *args).result()
    assert [(rc, shown) for rc, shown, _ in silent] == [(1, "")] * 3
    assert piped.rc == 1 and piped.err == ""  # a pipe (a CI log, a file) gets no progress


def test_force_exclude_applies_excludes_to_named_files(work: Path) -> None:
    """--force-exclude (ruff's, which pre-commit needs): named files obey exclude too."""
    config = '[tool.inplace-lint]\nextend-exclude = ["legacy"]\n'
    (work / "pyproject.toml").write_text(config, encoding="utf-8")
    write(work, {"legacy/old.py": HAZARD, "build/gen.py": HAZARD, "src/new.py": HAZARD})
    named = ["legacy/old.py", "build/gen.py", "src/new.py"]
    argvs = [named, ["--force-exclude", *named], ["--force-exclude", "legacy", "build", "src"]]
    plain, forced, folders = run_all(work, argvs)
    assert [line.split(" ")[0] for line in plain.lines[:-1]] == [
        "build/gen.py:4:1:",
        "legacy/old.py:4:1:",
        "src/new.py:4:1:",
    ]
    assert forced.rc == folders.rc == 1
    assert [line.split(" ")[0] for line in forced.lines[:-1]] == ["src/new.py:4:1:"]
    assert folders.out == forced.out
    alone = run(work, "--force-exclude", "legacy/old.py")
    assert (alone.rc, alone.out, alone.err) == (0, "All checks passed!\n", "")
    stdin = run(work, "--force-exclude", "-", "--stdin-filename", "legacy/x.py", stdin=HAZARD)
    assert (stdin.rc, stdin.out) == (0, "All checks passed!\n")
    kept = run(work, "--force-exclude", "-", "--stdin-filename", "src/x.py", stdin=HAZARD)
    assert kept.rc == 1 and kept.lines[0].startswith("src/x.py:4:1: IPL001 ")

"""The ``inplace-lint`` command end to end, in a scratch folder.

Every invocation goes through :func:`run`, which also checks that no traceback reached stderr.
It runs the command line in this process (tests/cli_runner.py); what only a process shows
(the entry point, exit statuses, bytes on standard input, help and version, a closed pipe)
goes through :func:`run_process`, a real ``python -m inplace_lint``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_runner import in_process, write

from inplace_lint import __version__

RULES_DIR = Path(__file__).resolve().parents[1] / "rules"

HAZARD = """\
import torch
a = torch.randn(4, requires_grad=True)
x = torch.sigmoid(a)
x.mul_(2)
x.sum().backward()
"""
HAZARD_MESSAGE = (
    "IPL001 `x.mul_()` overwrites `x` in place after `torch.sigmoid` saved its output for"
    " backward (line 3); backward will fail with 'modified by an inplace operation'"
)
#: IPL003 on line 3, IPL001 on line 6, IPL002 on line 9, opt-in IPL008 on line 12 (column 5).
MIXED = """\
import torch
w = torch.randn(4, requires_grad=True)
w.add_(1)
a = torch.randn(4, requires_grad=True)
x = torch.sigmoid(a)
x.mul_(2)
y = a * 2
z = y.view(4)
y.add_(1)
loss = z.sum() + x.sum()
loss.backward()
r = (a * 3).clamp(min=0)
"""
#: Two findings on line 5: IPL001 at column 1 and IPL003 at column 12.
SAME_LINE = """\
import torch
w = torch.randn(4, requires_grad=True)
a = torch.randn(4, requires_grad=True)
x = torch.sigmoid(a)
x.mul_(2); w.add_(1)
x.sum().backward()
"""
#: IPL001 on lines 4 and 11: numeric, not textual, line order.
TWO_HAZARDS = HAZARD + "# padding\n" * 4 + "u = torch.sigmoid(a)\nu.mul_(2)\nu.sum().backward()\n"
CLEAN = "import torch\nx = torch.randn(4)\nx.add_(1)\ny = torch.relu(x)\n"
FINDING_LINE = re.compile(r"^(?P<head>.+?:\d+:\d+: (?:IPL\d{3})) \S.*$")
#: The line that ends a text report, as ruff's "Found 3 errors." / "All checks passed!".
SUMMARY_LINE = re.compile(
    r"^(All checks passed!|Found \d+ findings?( \([^()]*\))?( and \d+ errors?)?\.)$"
)
PASSED = "All checks passed!\n"


@dataclass(frozen=True)
class Result:
    """What one run of the command produced."""

    rc: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        """Standard output's lines, less the summary line that ends a text report."""
        lines = self.out.splitlines()
        return lines[:-1] if lines and SUMMARY_LINE.match(lines[-1]) else lines

    @property
    def summary(self) -> str | None:
        """The summary line that ends a text report, if there is one."""
        lines = self.out.splitlines()
        return lines[-1] if lines and SUMMARY_LINE.match(lines[-1]) else None

    @property
    def heads(self) -> list[str]:
        """``path:line:col: CODE`` of each output line (every line must be a finding)."""
        heads = []
        for line in self.lines:
            match = FINDING_LINE.match(line)
            assert match is not None, f"not a finding line: {line!r}"
            heads.append(match["head"])
        return heads

    @property
    def errors(self) -> list[str]:
        lines = self.err.splitlines()
        assert all(line.startswith("inplace-lint: error: ") for line in lines), self.err
        return lines


def _result(code: int, stdout: bytes, stderr: bytes) -> Result:
    out = stdout.decode("utf-8", "replace")
    err = stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and "Traceback" not in out, err
    return Result(code, out, err)


def run(cwd: Path, *args: str, stdin: bytes | str = b"") -> Result:
    """Run ``inplace-lint ARGS`` in ``cwd``, in this process; fail on any traceback."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return _result(*in_process(cwd, args, data))


def run_process(cwd: Path, *args: str, stdin: bytes | str = b"") -> Result:
    """Run ``python -m inplace_lint ARGS`` in ``cwd`` as a real process."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    proc = subprocess.run(
        [sys.executable, "-m", "inplace_lint", *args],
        cwd=cwd,
        input=data,
        capture_output=True,
        timeout=120,
    )
    return _result(proc.returncode, proc.stdout, proc.stderr)


def run_all(cwd: Path, argvs: Sequence[Sequence[str]]) -> list[Result]:
    """Several independent runs, one after another."""
    return [run(cwd, *argv) for argv in argvs]


def test_format_is_sorted_by_path_line_and_column(work: Path) -> None:
    """`path:line:col: CODE message`, 1-based, sorted across files and folders; only *.py."""
    write(
        work,
        {
            "b.py": HAZARD,
            "a.py": MIXED,
            "same.py": SAME_LINE,
            "pkg/z.py": TWO_HAZARDS,
            "pkg/sub/deep.py": HAZARD,
            "pkg2.py": HAZARD,
            "clean.py": CLEAN,
            "notes.txt": HAZARD,
            "script": HAZARD,
            "stub.pyi": HAZARD,
        },
    )
    expected = [
        "a.py:3:1: IPL003",
        "a.py:6:1: IPL001",
        "a.py:9:1: IPL002",
        "b.py:4:1: IPL001",
        "pkg/sub/deep.py:4:1: IPL001",
        "pkg/z.py:4:1: IPL001",
        "pkg/z.py:11:1: IPL001",
        "pkg2.py:4:1: IPL001",
        "same.py:5:1: IPL001",
        "same.py:5:12: IPL003",
    ]
    whole, reordered, dotted, absolute = run_all(
        work, [["."], ["same.py", "pkg2.py", "pkg", "b.py", "a.py"], ["./pkg/"], [str(work)]]
    )
    assert whole.rc == 1 and whole.err == ""
    assert whole.heads == expected
    assert f"b.py:4:1: {HAZARD_MESSAGE}" in whole.lines
    assert (reordered.rc, reordered.heads, reordered.err) == (1, expected, "")
    assert dotted.heads == [h for h in expected if h.startswith("pkg/")]
    assert absolute.heads == [f"{work}{os.sep}{head}" for head in expected]


def test_directory_walk_skips_tool_and_virtualenv_folders(work: Path) -> None:
    """Tool, cache and virtualenv folders are skipped; a folder named `weird.py` is walked."""
    skipped = [".git", ".venv", "venv", "env", "build", "dist", "__pycache__", "pkg/build"]
    write(work, {f"{folder}/m.py": HAZARD for folder in skipped})
    write(work, {"env/pyvenv.cfg": "home = /usr/bin\n", "pkg/m.py": HAZARD})
    write(work, {"weird.py/inner.py": HAZARD, "weird.py/deeper/more.py": HAZARD})
    walked, named = run_all(work, [["."], [".git/m.py", "weird.py"]])
    assert (walked.rc, walked.err) == (1, "")
    assert walked.heads == [
        "pkg/m.py:4:1: IPL001",
        "weird.py/deeper/more.py:4:1: IPL001",
        "weird.py/inner.py:4:1: IPL001",
    ]
    # A file or folder named on the command line is checked even where a walk would skip it.
    assert (named.rc, named.err) == (1, "")
    assert named.heads == [
        ".git/m.py:4:1: IPL001",
        "weird.py/deeper/more.py:4:1: IPL001",
        "weird.py/inner.py:4:1: IPL001",
    ]


def test_a_named_excluded_folder_is_checked(work: Path) -> None:
    """Like a named file, a named folder is checked even if the walk would skip it."""
    write(work, {"build/m.py": HAZARD})
    result = run(work, "build")
    assert (result.rc, result.heads) == (1, ["build/m.py:4:1: IPL001"])


def test_a_file_named_twice_is_reported_once(work: Path) -> None:
    """Overlapping paths (`. h.py ./h.py`) do not duplicate findings."""
    write(work, {"h.py": HAZARD, "pkg/m.py": HAZARD})
    result = run(work, "h.py", "./h.py", ".", "pkg/m.py", str(work / "h.py"))
    assert (result.rc, result.err) == (1, "")
    assert result.heads == ["h.py:4:1: IPL001", "pkg/m.py:4:1: IPL001"]


def test_exit_codes_for_clean_findings_and_exit_zero(work: Path) -> None:
    """0 when clean (an empty file included), 1 with findings, 0 with --exit-zero."""
    write(work, {"clean.py": CLEAN, "empty.py": "", "h.py": HAZARD})
    # a real process: the exit status is what the entry point gives the shell
    clean, found, zero = (
        run_process(work, *argv)
        for argv in (["clean.py", "empty.py"], ["clean.py", "h.py"], ["--exit-zero", "h.py"])
    )
    assert (clean.rc, clean.out, clean.err) == (0, PASSED, "")
    assert (found.rc, found.heads, found.err) == (1, ["h.py:4:1: IPL001"], "")
    assert (zero.rc, zero.lines, zero.err) == (0, [f"h.py:4:1: {HAZARD_MESSAGE}"], "")


def test_usage_errors_exit_2_with_one_line(work: Path) -> None:
    """Bad options and unknown codes: exit 2, one line on stderr."""
    write(work, {"h.py": HAZARD})
    cases: list[tuple[list[str], str]] = [
        (["--bogus", "h.py"], "--bogus"),
        (["--select", "IPL123", "h.py"], "IPL123"),
        (["--select=E501", "h.py"], "E501"),
        (["--ignore", "IPL001,XYZ9", "h.py"], "XYZ9"),
        (["--extend-select", "FOO", "h.py"], "FOO"),
        (["rules", "extra"], "extra"),
        (["rule"], "usage"),
        (["rule", "IPL001", "IPL002"], "usage"),
    ]
    results = run_all(work, [argv for argv, _ in cases])
    for (argv, needle), result in zip(cases, results, strict=True):
        assert result.rc == 2, argv
        assert result.out == "", argv
        assert len(result.errors) == 1 and needle in result.err, (argv, result.err)


def test_help_and_version(work: Path) -> None:
    """--help and --version exit 0."""
    help_, version = run_process(work, "--help"), run_process(work, "--version")
    assert help_.rc == 0 and help_.out.startswith("usage: inplace-lint")
    assert (version.rc, version.out, version.err) == (0, f"inplace-lint {__version__}\n", "")


def test_missing_path_is_one_line_and_other_paths_are_still_checked(work: Path) -> None:
    """A missing path is an error (even with --exit-zero); the rest is still linted."""
    write(work, {"h.py": HAZARD})
    result = run(work, "nope.py", "h.py", "missing/dir/")
    assert result.rc == 2
    assert result.heads == ["h.py:4:1: IPL001"]
    assert result.errors == [
        "inplace-lint: error: path does not exist: nope.py",
        "inplace-lint: error: path does not exist: missing/dir/",
    ]
    with_zero = run(work, "--exit-zero", "nope.py", "h.py")
    assert (with_zero.rc, with_zero.heads) == (2, ["h.py:4:1: IPL001"])


def test_files_that_cannot_be_decoded_or_parsed(work: Path) -> None:
    """IPL999 for syntax, encoding and null-byte problems; BOM, cookie and CR/CRLF parse."""
    latin = HAZARD.replace("backward()", "backward()  # caf\xe9").encode("latin-1")
    write(
        work,
        {
            "syntax.py": "import torch\nx = torch.randn(3)\nx.add_(1\n",
            "latin.py": latin,
            "cookie.py": b"# -*- coding: latin-1 -*-\n" + latin,
            "badcookie.py": "# -*- coding: klingon -*-\n" + HAZARD,
            "bom.py": b"\xef\xbb\xbf" + HAZARD.encode(),
            "nul.py": b"import torch\nx = torch.randn(3)\x00\nx.add_(1)\n",
            "crlf.py": HAZARD.replace("\n", "\r\n"),
            "cr.py": HAZARD.replace("\n", "\r"),
            "empty.py": "",
            "h.py": HAZARD,
        },
    )
    result = run(work, ".", "--statistics")
    assert (result.rc, result.err) == (2, "")
    assert result.lines == [
        "badcookie.py:1:1: IPL999 cannot parse: unknown encoding 'klingon' in coding cookie",
        f"bom.py:4:1: {HAZARD_MESSAGE}",
        f"cookie.py:5:1: {HAZARD_MESSAGE.replace('line 3', 'line 4')}",
        f"cr.py:4:1: {HAZARD_MESSAGE}",
        f"crlf.py:4:1: {HAZARD_MESSAGE}",
        f"h.py:4:1: {HAZARD_MESSAGE}",
        "latin.py:1:1: IPL999 cannot parse: cannot decode as utf-8 (line 5): "
        "invalid continuation byte",
        "nul.py:2:1: IPL999 cannot parse: source contains a null byte",
        "syntax.py:3:7: IPL999 cannot parse: '(' was never closed",
        "5     IPL001 saved-for-backward",
        "4     IPL999 cannot-parse",
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_and_folder(work: Path) -> None:
    """Permission errors are one line each; readable files are still checked."""
    write(work, {"h.py": HAZARD, "locked.py": HAZARD, "shut/inner.py": HAZARD})
    (work / "locked.py").chmod(0)
    (work / "shut").chmod(0)
    try:
        result = run(work, ".")
        inside = run(work, "shut/inner.py", "h.py")
    finally:
        (work / "locked.py").chmod(0o644)
        (work / "shut").chmod(0o755)
    assert (result.rc, result.heads) == (2, ["h.py:4:1: IPL001"])
    assert sorted(result.errors) == [
        "inplace-lint: error: cannot read locked.py: Permission denied",
        "inplace-lint: error: cannot read shut: Permission denied",
    ]
    assert (inside.rc, inside.heads) == (2, ["h.py:4:1: IPL001"])
    assert inside.errors == ["inplace-lint: error: cannot read shut/inner.py: Permission denied"]


def test_symlink_loops_do_not_hang_or_crash(work: Path) -> None:
    """A looping folder link is not followed; a looping file link is one error line."""
    write(work, {"tree/real.py": HAZARD, "h.py": HAZARD})
    os.symlink("..", work / "tree" / "up")  # a folder loop: not followed
    os.symlink("loop.py", work / "tree" / "loop.py")  # a file that points at itself
    os.symlink("ring", work / "ring")
    walked, named = run_all(work, [["tree"], ["ring", "h.py"]])
    assert (walked.rc, walked.heads) == (2, ["tree/real.py:4:1: IPL001"])
    assert walked.errors == [
        "inplace-lint: error: cannot read tree/loop.py: Too many levels of symbolic links"
    ]
    assert (named.rc, named.heads) == (2, ["h.py:4:1: IPL001"])
    assert named.errors == [
        "inplace-lint: error: cannot read ring: Too many levels of symbolic links"
    ]


def test_checked_code_is_never_imported_or_run(work: Path) -> None:
    """The static path reads files, never imports them."""
    marker = work / "MARKER"
    evil = HAZARD + f"open({str(marker)!r}, 'w').close()\nraise SystemExit(3)\n"
    write(work, {"evil.py": evil, "pkg/__init__.py": evil, "conftest.py": evil})
    result = run(work, ".")
    assert (result.rc, result.err) == (1, "")
    assert result.heads == [
        "conftest.py:4:1: IPL001",
        "evil.py:4:1: IPL001",
        "pkg/__init__.py:4:1: IPL001",
    ]
    assert not marker.exists()


SELECTIONS: list[tuple[list[str], list[str]]] = [
    ([], ["3:1: IPL003", "6:1: IPL001", "9:1: IPL002"]),
    (["--select", "IPL001"], ["6:1: IPL001"]),
    (["--select=IPL001,IPL003"], ["3:1: IPL003", "6:1: IPL001"]),
    (["--select", "IPL001, IPL002"], ["6:1: IPL001", "9:1: IPL002"]),
    (["--select", "ipl003"], ["3:1: IPL003"]),
    (["--select", "IPL00"], ["3:1: IPL003", "6:1: IPL001", "9:1: IPL002"]),
    (["--select", "IPL"], ["3:1: IPL003", "6:1: IPL001", "9:1: IPL002"]),
    (["--ignore", "IPL001,IPL002"], ["3:1: IPL003"]),
    (["--ignore", "IPL00"], []),
    (["--select", "IPL001,IPL002", "--ignore", "IPL002"], ["6:1: IPL001"]),
    (["--extend-select", "IPL008"], ["3:1: IPL003", "6:1: IPL001", "9:1: IPL002", "12:5: IPL008"]),
    (["--extend-select", "IPL00"], ["3:1: IPL003", "6:1: IPL001", "9:1: IPL002"]),
    (["--select", "IPL008"], ["12:5: IPL008"]),
    (["--select", "IPL003", "--extend-select", "IPL008"], ["3:1: IPL003", "12:5: IPL008"]),
    (["--extend-select", "IPL008", "--ignore", "IPL0"], []),
]  # fmt: skip


def test_select_ignore_and_extend_select(work: Path) -> None:
    """Codes and prefixes; the opt-in IPL008 only when named by its full code."""
    write(work, {"m.py": MIXED})
    results = run_all(work, [[*options, "m.py"] for options, _ in SELECTIONS])
    for (options, expected), result in zip(SELECTIONS, results, strict=True):
        assert result.heads == [f"m.py:{head}" for head in expected], options
        assert (result.rc, result.err) == (1 if expected else 0, ""), options


def test_ipl008_message(work: Path) -> None:
    """The opt-in rule's full output line."""
    write(work, {"m.py": MIXED})
    result = run(work, "--select", "IPL008", "m.py")
    assert result.lines == [
        "m.py:12:5: IPL008 `(a * 3).clamp(min=0)` is used as a ReLU; its gradient at exactly 0"
        " is 1 where relu's is 0: use relu() if a ReLU is meant"
    ]


def test_statistics_follow_the_findings_most_frequent_first(work: Path) -> None:
    """--statistics appends `count CODE name` lines, most frequent first."""
    write(work, {"a.py": MIXED, "b.py": HAZARD})
    result = run(work, "--statistics", ".")
    assert (result.rc, result.err) == (1, "")
    assert result.lines[4:] == [
        "2     IPL001 saved-for-backward",
        "1     IPL002 stale-read",
        "1     IPL003 leaf-inplace",
    ]
    assert len(result.lines) == 7
    clean = run(work, "--statistics", "--select", "IPL008", "b.py")
    assert (clean.rc, clean.out) == (0, PASSED)


def test_show_source_prints_the_line_and_a_caret(work: Path) -> None:
    """--show-source: the line, then a caret under the column (tabs kept, \f not a line end)."""
    tabbed = HAZARD.replace("x.mul_(2)\n", "if a.sum() > 0:\n\tx.mul_(2)\n")
    feeds = HAZARD.replace("import torch\n", "import torch\n\x0c\n# a\u2028b\n")
    write(work, {"same.py": SAME_LINE, "tab.py": tabbed, "feed.py": feeds})
    result = run(work, "--show-source", "same.py", "tab.py", "feed.py")
    assert (result.rc, result.err) == (1, "")
    lines = result.lines
    assert lines[0] == f"feed.py:6:1: {HAZARD_MESSAGE.replace('line 3', 'line 5')}"
    assert lines[1:3] == ["    x.mul_(2)", "    ^"]
    assert lines[3].startswith("same.py:5:1: IPL001 ")
    assert lines[4:6] == ["    x.mul_(2); w.add_(1)", "    ^"]
    assert lines[6].startswith("same.py:5:12: IPL003 ")
    assert lines[7:9] == ["    x.mul_(2); w.add_(1)", "               ^"]
    assert lines[9].startswith("tab.py:5:2: IPL001 ")
    assert lines[10:] == ["    \tx.mul_(2)", "    \t^"]


def test_stdin(work: Path) -> None:
    """`-` reads standard input, reported as --stdin-filename or `<stdin>`."""
    write(work, {"b.py": HAZARD, "other.py": CLEAN})
    named = run_process(work, "-", "--stdin-filename", "pkg/mod.py", stdin=HAZARD)
    assert (named.rc, named.lines, named.err) == (1, [f"pkg/mod.py:4:1: {HAZARD_MESSAGE}"], "")
    anonymous = run(work, "check", "-", stdin=HAZARD)
    assert (anonymous.rc, anonymous.heads) == (1, ["<stdin>:4:1: IPL001"])
    mixed = run(work, "b.py", "-", "--stdin-filename", "a.py", stdin=SAME_LINE)
    assert mixed.heads == ["a.py:5:1: IPL001", "a.py:5:12: IPL003", "b.py:4:1: IPL001"]
    empty = run(work, "-", "--stdin-filename", "e.py", stdin=b"")
    assert (empty.rc, empty.out, empty.err) == (0, PASSED, "")
    latin = run_process(
        work, "-", "--stdin-filename", "l.py", stdin=b"import torch\nx = 1 # \xe9\n"
    )
    assert latin.rc == 2 and latin.heads == ["l.py:1:1: IPL999"]
    # The shown line comes from standard input, not from a file of the same name on disk.
    shown = run(work, "--show-source", "-", "--stdin-filename", "other.py", stdin=SAME_LINE)
    assert shown.lines[1:3] == ["    x.mul_(2); w.add_(1)", "    ^"]


def test_noqa_comments(work: Path) -> None:
    """Bare and coded noqa, any line of a multi-line statement; not inside strings."""
    source = '''\
import torch
a = torch.randn(4, requires_grad=True)
x1 = torch.sigmoid(a)
x1.mul_(2)  # noqa
x2 = torch.sigmoid(a)
x2.mul_(2)  # noqa: IPL001
x3 = torch.sigmoid(a)
x3.mul_(2)  # noqa: IPL002
x4 = torch.sigmoid(a)
x4.mul_(2)  #NOQA:ipl003,ipl001 the saved output is never needed
x5 = torch.sigmoid(a)
torch.mul(
    x5, 2, out=x5,  # noqa: IPL001
)
x6 = torch.sigmoid(a)
torch.mul(
    x6, 2, out=x6
)  # noqa: IPL001
x7 = torch.sigmoid(a)
x7.mul_(2); s = "# noqa"
x8 = torch.sigmoid(a)
x8.mul_(2); t = """
# noqa
"""
x9 = torch.sigmoid(a)
x9.mul_(2)
# noqa
(x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9).sum().backward()
'''
    write(work, {"n.py": source})
    result = run(work, "n.py")
    assert (result.rc, result.err) == (1, "")
    assert result.heads == [
        "n.py:8:1: IPL001",
        "n.py:20:1: IPL001",
        "n.py:22:1: IPL001",
        "n.py:26:1: IPL001",
    ]


def test_rules_and_rule_pages(work: Path) -> None:
    """`rules` lists every code; `rule CODE` prints its page; unknown codes exit 2."""
    listing, page, lower, unknown = run_all(
        work, [["rules"], ["rule", "IPL001"], ["rule", "ipl008"], ["rule", "IPL123"]]
    )
    assert (listing.rc, listing.err) == (0, "")
    codes = [line.split()[0] for line in listing.lines]
    assert codes == [f"IPL00{n}" for n in range(1, 9)] + ["IPL999"]
    states = {line.split()[0]: line.split()[2] for line in listing.lines}
    assert states == {code: "opt-in" if code == "IPL008" else "on" for code in codes}
    assert (page.rc, page.err) == (0, "")
    assert page.out.startswith("# IPL001 ")
    assert page.out == (RULES_DIR / "IPL001.md").read_text(encoding="utf-8")
    assert (lower.rc, lower.out.splitlines()[0].split()[:2]) == (0, ["#", "IPL008"])
    assert (unknown.rc, unknown.out) == (2, "")
    assert len(unknown.errors) == 1 and "IPL123" in unknown.err


def test_every_listed_code_has_a_rule_page(work: Path) -> None:
    """Every code `rules` lists can be shown with `rule`."""
    result = run(work, "rule", "IPL999")
    assert result.rc == 0 and result.out.startswith("# IPL999")


def test_closed_stdout_gives_no_traceback(work: Path) -> None:
    """`inplace-lint ... | head -1` ends quietly."""
    lines = ["import torch", "a = torch.randn(4, requires_grad=True)"]
    for i in range(400):  # about 75 kB of output: more than a pipe buffers
        lines += [f"x{i} = a.sigmoid()", f"x{i}.mul_(2)", f"x{i}.sum().backward()"]
    write(work, {"big.py": "\n".join(lines) + "\n"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "inplace_lint", "big.py"],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert first.startswith(b"big.py:4:1: IPL001 ")
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_excludes_still_apply_below_a_named_excluded_folder(work: Path) -> None:
    """Naming `build` checks it, but a `.venv`-style or excluded folder inside is still skipped."""
    nested = {"build/build/n.py": HAZARD, "build/__pycache__/o.py": HAZARD}
    write(work, {"build/m.py": HAZARD, **nested})
    result = run(work, "build")
    assert (result.rc, result.heads) == (1, ["build/m.py:4:1: IPL001"])


def test_the_readme_quotes_the_examples_summary_line_as_it_is() -> None:
    """The README's Quick start says what linting examples/ ends with; keep it true."""
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"Over all of `examples/` the last line reads\n`([^`]+)`", readme)
    assert quoted is not None
    result = run(root, "--no-cache", "examples")
    assert result.summary == quoted.group(1)

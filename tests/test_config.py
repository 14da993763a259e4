"""``[tool.inplace-lint]`` in pyproject.toml, ``--config`` and ``--isolated``, end to end.

Each test builds a small project in ``tmp_path`` and runs the command line on it, in this
process (tests/cli_runner.py; the process around it is tested in test_cli.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cli_runner import in_process

#: IPL001 at 4:1.
HAZARD = """\
import torch
a = torch.randn(4, requires_grad=True)
x = torch.sigmoid(a)
x.mul_(2)
x.sum().backward()
"""
#: IPL003 at 3:1.
LEAF = "import torch\nw = torch.randn(4, requires_grad=True)\nw.add_(1)\n"
#: Only the opt-in IPL008, at 3:5.
CLAMP = "import torch\na = torch.randn(4, requires_grad=True)\nr = (a * 3).clamp(min=0)\n"
PROJECT = {
    "src/h.py": HAZARD,
    "src/leaf.py": LEAF,
    "src/clampy.py": CLAMP,
    "tests/test_leaf.py": LEAF,
    "legacy/old.py": HAZARD,
    "third_party/vendored.py": HAZARD,
    "build/gen.py": HAZARD,
}
DEFAULT = [
    "legacy/old.py:4:1: IPL001",
    "src/h.py:4:1: IPL001",
    "src/leaf.py:3:1: IPL003",
    "tests/test_leaf.py:3:1: IPL003",
    "third_party/vendored.py:4:1: IPL001",
]


@dataclass(frozen=True)
class Result:
    """What one run of the command produced."""

    rc: int
    out: str
    err: str

    @property
    def heads(self) -> list[str]:
        """``path:line:col: CODE`` of each finding line (not the summary line that ends them)."""
        lines = self.out.splitlines()
        if lines and (lines[-1] == "All checks passed!" or lines[-1].startswith("Found ")):
            lines = lines[:-1]
        return [" ".join(line.split(" ", 2)[:2]) for line in lines]


def run(cwd: Path, *args: str, stdin: str = "") -> Result:
    """Run ``inplace-lint ARGS`` in ``cwd`` (in this process: tests/cli_runner.py); fail on
    any traceback."""
    code, stdout, stderr = in_process(cwd, args, stdin.encode())
    out = stdout.decode("utf-8", "replace")
    err = stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and "Traceback" not in out, err
    return Result(code, out, err)


def run_all(cwd: Path, argvs: Sequence[Sequence[str]]) -> list[Result]:
    """Several independent runs, one after another."""
    return [run(cwd, *argv) for argv in argvs]


def project(root: Path, config: str | None = None) -> Path:
    """Write the sample project under ``root`` with ``config`` as its pyproject.toml."""
    for name, content in PROJECT.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    text = '[project]\nname = "sample"\n' + (config or "")
    (root / "pyproject.toml").write_text(text, encoding="utf-8")
    return root


def assert_one_line_error(result: Result, *needles: str) -> None:
    """Exit 2, nothing on stdout, one ``inplace-lint: error:`` line holding every needle."""
    assert (result.rc, result.out) == (2, ""), result
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("inplace-lint: error: "), result.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_no_table_gives_the_defaults(tmp_path: Path) -> None:
    """A pyproject.toml without the table changes nothing."""
    root = project(tmp_path)
    result = run(root, ".")
    assert (result.rc, result.heads, result.err) == (1, DEFAULT, "")


def test_select_ignore_and_extend_select_from_the_file(tmp_path: Path) -> None:
    """The file's code lists, and how the command-line options combine with them."""
    cases: list[tuple[str, list[str], list[str]]] = [
        ('select = ["IPL003"]', [], ["src/leaf.py:3:1: IPL003", "tests/test_leaf.py:3:1: IPL003"]),
        # --select on the command line replaces the file's select.
        ('select = ["IPL003"]', ["--select", "IPL001"], [h for h in DEFAULT if "IPL001" in h]),
        ('select = ["ipl00"]', [], DEFAULT),
        ('ignore = ["IPL001"]', [], ["src/leaf.py:3:1: IPL003", "tests/test_leaf.py:3:1: IPL003"]),
        # --ignore adds to the file's ignore.
        ('ignore = ["IPL001"]', ["--ignore", "IPL003"], []),
        ('ignore = ["IPL0"]', [], []),
        ('extend-select = ["IPL008"]', [], sorted([*DEFAULT, "src/clampy.py:3:5: IPL008"])),
        ('extend-select = ["IPL00"]', [], DEFAULT),
        ('extend-select = ["IPL008"]', ["--ignore", "IPL00"], []),
        ("", ["--select", "IPL008"], ["src/clampy.py:3:5: IPL008"]),
        ('select = ["IPL003"]', ["--extend-select", "IPL008"], [
            "src/clampy.py:3:5: IPL008", "src/leaf.py:3:1: IPL003", "tests/test_leaf.py:3:1: IPL003"
        ]),
        ('select = ["IPL003"]\nextend-select = ["IPL008"]', [], [
            "src/clampy.py:3:5: IPL008", "src/leaf.py:3:1: IPL003", "tests/test_leaf.py:3:1: IPL003"
        ]),
    ]  # fmt: skip
    for index, (table, _, _) in enumerate(cases):
        project(tmp_path / str(index), f"[tool.inplace-lint]\n{table}\n")
    argvs = [[*options, "--", str(index)] for index, (_, options, _) in enumerate(cases)]
    results = run_all(tmp_path, argvs)
    for index, ((table, options, expected), result) in enumerate(zip(cases, results, strict=True)):
        shown = [head.removeprefix(f"{index}/") for head in result.heads]
        assert shown == expected, (table, options)
        assert (result.rc, result.err) == (1 if expected else 0, ""), (table, options)


def test_exclude_extend_exclude_and_per_file_ignores(tmp_path: Path) -> None:
    """Exclude replaces the defaults, extend-exclude adds; per-file-ignores globs."""
    project(tmp_path / "replace", '[tool.inplace-lint]\nexclude = ["third_party"]\n')
    project(
        tmp_path / "extend", '[tool.inplace-lint]\nextend-exclude = ["legacy/*.py", "src/c*"]\n'
    )
    per_file = '"tests/*" = ["IPL003"]\n"src/h*.py" = ["IPL00"]\n"*/vendored.py" = ["IPL001"]\n'
    project(tmp_path / "pfi", f"[tool.inplace-lint.per-file-ignores]\n{per_file}")
    replace, extend, named, pfi, pfi_inside = run_all(
        tmp_path,
        [
            ["replace"],
            ["--extend-select", "IPL008", "extend"],
            ["extend/legacy/old.py"],
            ["pfi"],
            ["pfi/src", "pfi/tests/test_leaf.py"],
        ],
    )
    # exclude replaces the default excludes, so build/ is walked again.
    assert replace.heads == [
        "replace/build/gen.py:4:1: IPL001",
        "replace/legacy/old.py:4:1: IPL001",
        "replace/src/h.py:4:1: IPL001",
        "replace/src/leaf.py:3:1: IPL003",
        "replace/tests/test_leaf.py:3:1: IPL003",
    ]
    # extend-exclude keeps them (build/ stays out) and adds glob patterns.
    assert extend.heads == [
        "extend/src/h.py:4:1: IPL001",
        "extend/src/leaf.py:3:1: IPL003",
        "extend/tests/test_leaf.py:3:1: IPL003",
        "extend/third_party/vendored.py:4:1: IPL001",
    ]
    # A file named on the command line is checked even if excluded.
    assert (named.rc, named.heads) == (1, ["extend/legacy/old.py:4:1: IPL001"])
    # Patterns are relative to the folder of the pyproject.toml, whatever the cwd.
    assert pfi.heads == ["pfi/legacy/old.py:4:1: IPL001", "pfi/src/leaf.py:3:1: IPL003"]
    assert pfi_inside.heads == ["pfi/src/leaf.py:3:1: IPL003"]
    from_src = run(tmp_path / "pfi" / "src", ".", "../tests")
    assert (from_src.rc, from_src.heads, from_src.err) == (1, ["leaf.py:3:1: IPL003"], "")


def test_the_nearest_pyproject_above_the_path_is_used(tmp_path: Path) -> None:
    """The nearest pyproject.toml at or above the first path applies."""
    (tmp_path / "pyproject.toml").write_text('[tool.inplace-lint]\nselect = ["IPL003"]\n')
    inner = project(tmp_path / "inner", '[tool.inplace-lint]\nselect = ["IPL001"]\n')
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "h.py").write_text(HAZARD + LEAF.split("\n", 1)[1])
    (tmp_path / "elsewhere").mkdir()
    from_top, from_other = run_all(tmp_path, [["inner/src"], ["other"]])
    assert from_top.heads == ["inner/src/h.py:4:1: IPL001"]
    assert (from_other.rc, from_other.heads) == (1, ["other/h.py:7:1: IPL003"])
    from_inside = run(inner / "src", ".")
    assert from_inside.heads == ["h.py:4:1: IPL001"]
    # The path, not the working directory, decides which file applies.
    from_elsewhere = run(tmp_path / "elsewhere", "../inner/src")
    assert from_elsewhere.heads == ["../inner/src/h.py:4:1: IPL001"]
    # So does --stdin-filename, even for a file not yet saved.
    stdin = run(tmp_path / "elsewhere", "-", "--stdin-filename", "../inner/new.py", stdin=LEAF)
    assert (stdin.rc, stdin.out, stdin.err) == (0, "All checks passed!\n", "")


BAD_TABLES: list[tuple[str, list[str]]] = [
    ('[tool.inplace-lint]\nselectt = ["IPL001"]\n', ["unknown key", "'selectt'"]),
    ('[tool.inplace-lint]\nselect = "IPL001"\n', ["select", "list of strings"]),
    ("[tool.inplace-lint]\nignore = [1]\n", ["ignore", "list of strings"]),
    ('[tool.inplace-lint]\nextend-exclude = "build"\n', ["extend-exclude"]),
    ('[tool.inplace-lint\nselect = ["IPL001"]\n', ["invalid TOML"]),
    ('[tool.inplace-lint]\nselect = ["IPL123"]\n', ["'IPL123'"]),
    ('[tool.inplace-lint]\nextend-select = ["E501"]\n', ["'E501'"]),
    ('[tool.inplace-lint]\nper-file-ignores = ["IPL001"]\n', ["per-file-ignores"]),
    ('[tool.inplace-lint.per-file-ignores]\n"*.py" = "IPL001"\n', ["per-file-ignores"]),
    ('[tool.inplace-lint.per-file-ignores]\n"*.py" = ["XYZ1"]\n', ["'XYZ1'"]),
    ("[tool]\ninplace-lint = 3\n", ["must be a table"]),
    (b"\xff\xfe[tool]".decode("latin-1"), ["cannot read"]),
]


def test_bad_configuration_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Unknown keys, wrong types, broken TOML and unknown codes: one line naming the file."""
    for index, (table, _) in enumerate(BAD_TABLES):
        root = project(tmp_path / str(index))
        (root / "pyproject.toml").write_bytes(table.encode("latin-1"))
    results = run_all(tmp_path, [[f"{index}/src/h.py"] for index in range(len(BAD_TABLES))])
    for index, ((_, needles), result) in enumerate(zip(BAD_TABLES, results, strict=True)):
        where = str(tmp_path / str(index) / "pyproject.toml")
        assert_one_line_error(result, where, *needles)


def test_isolated_ignores_the_file_and_config_names_one(tmp_path: Path) -> None:
    """--isolated skips pyproject.toml; --config PATH reads the named file instead."""
    root = project(tmp_path / "proj", "[tool.inplace-lint\nbroken\n")
    custom = tmp_path / "cfg" / "custom.toml"
    custom.parent.mkdir()
    custom.write_text('[tool.inplace-lint]\nselect = ["IPL003"]\n', encoding="utf-8")
    broken, isolated, configured, missing = run_all(
        root,
        [
            ["."],
            ["--isolated", "."],
            ["--config", str(custom), "."],
            ["--config", "nope.toml", "."],
        ],
    )
    assert_one_line_error(broken, "invalid TOML")
    assert (isolated.rc, isolated.heads, isolated.err) == (1, DEFAULT, "")
    assert configured.heads == ["src/leaf.py:3:1: IPL003", "tests/test_leaf.py:3:1: IPL003"]
    assert (configured.rc, configured.err) == (1, "")
    assert_one_line_error(missing, "nope.toml")
    (root / "pyproject.toml").write_text('[tool.inplace-lint]\nselect = ["IPL003"]\n')
    isolated_again = run(root, "--isolated", "src/h.py", "src/leaf.py")
    assert isolated_again.heads == ["src/h.py:4:1: IPL001", "src/leaf.py:3:1: IPL003"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[tool.inplace-lint]\nselect = ["NOPE"]\n', encoding="utf-8")
    assert_one_line_error(run(root, "--config", str(bad), "."), "'NOPE'", str(bad))

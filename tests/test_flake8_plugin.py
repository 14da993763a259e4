"""The flake8 plugin, through the real flake8: same findings as the CLI, flake8's own filters."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import libcst
import pytest
from harness import case_examples, catalogue_examples

from inplace_lint.flake8_plugin import InplaceLintChecker

ROOT = Path(__file__).resolve().parent.parent
FLAKE8_FORMAT = "%(path)s|%(row)d|%(col)d|%(code)s|%(text)s"

#: IPL001 on line 4 and on line 8, opt-in IPL008 on line 9 (column 5).
SOURCE = """\
import torch
a = torch.randn(4, requires_grad=True)
x = torch.sigmoid(a)
x.mul_(2)
x.sum().backward()
y = torch.sigmoid(a)
y.mul_(
    2)
z = a.clamp(min=0)
y.sum().backward()
"""

Report = set[tuple[str, int, int, str, str]]


def flake8(args: list[str], cwd: Path, stdin: str | None = None) -> Report:
    """Run the real flake8 (isolated from any config) and parse its report."""
    proc = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", f"--format={FLAKE8_FORMAT}", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    found: Report = set()
    for line in proc.stdout.splitlines():
        path, row, col, code, text = line.split("|", 4)
        found.add((Path(path).as_posix(), int(row), int(col), code, text))
    return found


def cli(args: list[str], cwd: Path) -> Report:
    """Run ``inplace-lint --format json`` and put its findings in flake8's shape."""
    proc = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "--isolated", "--format", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {
        (
            Path(f["path"]).as_posix(),
            f["line"],
            f["column"],
            f["code"],
            f["message"],
        )
        for f in json.loads(proc.stdout)
    }


def test_flake8_matches_cli_on_every_catalogue_example_and_case(tmp_path: Path) -> None:
    """Every rules/ example and every second case file: same lines, columns, codes and
    messages (one flake8 process over all of them was the suite's second slowest test; the
    cases left out share their forms with those kept)."""
    examples = catalogue_examples(ROOT) + case_examples(ROOT)[::2]
    for number, example in enumerate(examples):
        name = example.origin.replace("/", "_").replace(":", "_").replace(".", "_")
        (tmp_path / f"{number:04d}_{name}.py").write_text(example.source, encoding="utf-8")
    # Encodings and line endings flake8 decodes itself: a BOM with CRLF, latin-1 with a cookie.
    crlf = ("\ufeff" + SOURCE.replace("\n", "\r\n")).encode("utf-8")
    (tmp_path / "bom_crlf.py").write_bytes(crlf)
    latin = "# -*- coding: latin-1 -*-\n" + SOURCE.replace("x.mul_(2)", "x.mul_(2); s = 'é'")
    (tmp_path / "latin.py").write_bytes(latin.encode("latin-1"))
    from_flake8 = flake8(["--select", "IPL", "--extend-select", "IPL008", "."], tmp_path)
    from_cli = cli(["--extend-select", "IPL008", "."], tmp_path)
    assert len(from_cli) >= 100
    assert {"bom_crlf.py", "latin.py"} <= {path for path, *_ in from_cli}
    assert {code for *_, code, _ in from_cli} >= {f"IPL00{n}" for n in range(1, 9)}
    assert {f[0] for f in from_flake8} <= {p.name for p in tmp_path.iterdir()}
    assert sorted(from_flake8 - from_cli) == [] and sorted(from_cli - from_flake8) == []


def test_opt_in_rule_only_when_named(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE, encoding="utf-8")

    def codes(*args: str) -> list[tuple[int, int, str]]:
        return sorted(
            (row, col, code) for _, row, col, code, _ in flake8([*args, "m.py"], tmp_path)
        )

    both = [(4, 1, "IPL001"), (7, 1, "IPL001")]
    assert codes() == both  # flake8's default selection includes the plugin's prefix
    assert codes("--select", "IPL") == both
    assert codes("--select", "IPL00") == both
    assert codes("--select", "IPL", "--extend-select", "IPL008") == [*both, (9, 5, "IPL008")]
    assert codes("--select", "IPL008") == [(9, 5, "IPL008")]
    assert codes("--extend-select", "IPL008", "--ignore", "IPL001") == [(9, 5, "IPL008")]
    assert codes("--select", "E,W,F") == []


def test_flake8_noqa_per_file_ignores_and_disable_noqa(tmp_path: Path) -> None:
    source = SOURCE.replace("x.mul_(2)", "x.mul_(2)  # noqa: IPL001").replace(
        "    2)", "    2)  # noqa"
    )
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    (tmp_path / "n.py").write_text(SOURCE, encoding="utf-8")
    quiet = flake8(["--select", "IPL", "m.py"], tmp_path)
    assert quiet == set()
    assert quiet == cli(["m.py"], tmp_path)
    # flake8's --disable-noqa also turns off the statement-wide noqa the plugin applies.
    loud = flake8(["--select", "IPL", "--disable-noqa", "m.py"], tmp_path)
    assert sorted((row, code) for _, row, _, code, _ in loud) == [(4, "IPL001"), (7, "IPL001")]
    ignored = flake8(
        ["--select", "IPL", "--per-file-ignores", "n.py:IPL001", "m.py", "n.py"], tmp_path
    )
    assert ignored == set()


def test_flake8_reads_stdin_through_the_plugin(tmp_path: Path) -> None:
    """flake8's lines are used as they are: the named file does not even exist."""
    found = flake8(["--select", "IPL", "--stdin-display-name", "ghost.py", "-"], tmp_path, SOURCE)
    assert sorted((path, row, col, code) for path, row, col, code, _ in found) == [
        ("ghost.py", 4, 1, "IPL001"),
        ("ghost.py", 7, 1, "IPL001"),
    ]


def test_plugin_parses_once_and_reuses_flake8s_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """libcst parses the text once; flake8's ``ast`` tree replaces the engine's own ast.parse."""
    tree = ast.parse(SOURCE)
    lines = SOURCE.splitlines(keepends=True)
    parses: list[str] = []
    real_cst_parse, real_ast_parse = libcst.parse_module, ast.parse

    def counting_cst_parse(text: str, *args: object, **kwargs: object) -> libcst.Module:
        parses.append("libcst")
        return real_cst_parse(text, *args, **kwargs)  # type: ignore[arg-type]

    def counting_ast_parse(*args: object, **kwargs: object) -> ast.AST:
        parses.append("ast")
        return real_ast_parse(*args, **kwargs)  # type: ignore[arg-type]

    list(InplaceLintChecker(tree, lines, "m.py").run())  # modules imported lazily: not counted
    monkeypatch.setattr(libcst, "parse_module", counting_cst_parse)
    monkeypatch.setattr(ast, "parse", counting_ast_parse)
    results = list(InplaceLintChecker(tree, lines, "m.py").run())
    assert parses == ["libcst"]
    assert [(row, col, text.split()[0]) for row, col, text, _ in results] == [
        (4, 0, "IPL001"),
        (7, 0, "IPL001"),
    ]


def test_a_file_that_does_not_parse_is_flake8s_e999(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import torch\nx = torch.randn(4)\nx.add_(1\n")
    found = flake8(["--select", "E9,IPL", "broken.py"], tmp_path)
    assert [code for *_, code, _ in found] == ["E999"]

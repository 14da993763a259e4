"""Jupyter notebooks end to end: real ``.ipynb`` files written by nbformat's own writer, linted
and fixed by the real ``inplace-lint`` process, read back with nbformat, and run under torch.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

from inplace_lint.notebook import CellIndex, parse
from inplace_lint.report.json_format import schema

HAZARD_CELL = "w = torch.ones(3, requires_grad=True)\ny = torch.sigmoid(w * 2); y.mul_(2)"
#: What the hazard is reported as, at cell 3, line 2, column 27 (``y.mul_``).
HAZARD_LINE = (
    "train.ipynb:cell 3:2:27: IPL001 `y.mul_()` overwrites `y` in place after `torch.sigmoid`"
    " saved its output for backward (line 2 of cell 3); backward will fail with 'modified by an"
    " inplace operation'"
)
SUMMARY = re.compile(r"^(All checks passed!|Found \d+ findings?.*)$")


def training_notebook(hazard: str = HAZARD_CELL) -> nbformat.NotebookNode:
    """Markdown, IPython magics, the hazard (with outputs), a bash cell and the backward."""
    notebook = new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.metadata["language_info"] = {"name": "python", "version": "3.11"}
    notebook.cells = [
        new_markdown_cell("# Training\nThe `y.mul_(2)` below is the bug."),
        new_code_cell("%matplotlib inline\nimport torch\n!pip list | grep torch"),
        new_code_cell(
            hazard,
            execution_count=7,
            outputs=[
                new_output("stream", name="stdout", text="héllo\n"),
                new_output(
                    "execute_result", data={"text/plain": "tensor([1.])"}, execution_count=7
                ),
            ],
        ),
        new_code_cell("%%bash\necho y.mul_(2) is not Python here"),
        new_code_cell("y.sum().backward()"),
    ]
    notebook.metadata["custom"] = {"kept": [1, 2, 3]}
    return notebook


def write_notebook(path: Path, notebook: nbformat.NotebookNode) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, str(path))
    return path


def run(cwd: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """The real command, ``python -m inplace_lint ARGS`` in ``cwd``; never a traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "inplace_lint", "--no-cache", *args],
        cwd=cwd,
        input=stdin.decode(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def run_all(cwd: Path, argvs: Sequence[Sequence[str]]) -> list[subprocess.CompletedProcess[str]]:
    """Several independent runs side by side (interpreter start-up dominates)."""
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        return list(pool.map(lambda argv: run(cwd, *argv), argvs))


def findings(out: str) -> list[str]:
    """The finding lines of a text report (less the closing summary line)."""
    return [line for line in out.splitlines() if line and not SUMMARY.match(line)]


def python_of(notebook: nbformat.NotebookNode) -> str:
    """The notebook's Python as it would run, IPython lines and non-Python cells left out."""
    lines = []
    for cell in notebook.cells:
        if cell.cell_type != "code" or cell.source.startswith("%%bash"):
            continue
        lines += [line for line in cell.source.splitlines() if not line.startswith(("%", "!"))]
    return "\n".join(lines) + "\n"


def test_a_hazard_in_a_cell_is_reported_at_its_cell_and_line(tmp_path: Path) -> None:
    write_notebook(tmp_path / "train.ipynb", training_notebook())
    folder = tmp_path / "project"
    write_notebook(folder / "nbs" / "train.ipynb", training_notebook())
    # Jupyter's autosave copies are excluded by default, as ruff excludes them.
    write_notebook(
        folder / "nbs" / ".ipynb_checkpoints" / "train-checkpoint.ipynb", training_notebook()
    )
    (folder / "clean.py").write_text("import torch\n", encoding="utf-8")
    by_name, in_folder = run_all(tmp_path, [["train.ipynb"], ["project"]])
    assert (by_name.returncode, findings(by_name.stdout), by_name.stderr) == (1, [HAZARD_LINE], "")
    assert findings(in_folder.stdout) == [
        HAZARD_LINE.replace("train.ipynb", "project/nbs/train.ipynb")
    ]
    assert in_folder.returncode == 1


def test_standard_input_is_read_as_a_notebook_by_its_stdin_filename(tmp_path: Path) -> None:
    data = nbformat.writes(training_notebook()).encode()
    proc = run(tmp_path, "-", "--stdin-filename", "train.ipynb", stdin=data)
    assert (proc.returncode, findings(proc.stdout)) == (1, [HAZARD_LINE])


def test_noqa_in_a_cell_silences_only_what_it_names(tmp_path: Path) -> None:
    write_notebook(
        tmp_path / "silenced" / "train.ipynb", training_notebook(HAZARD_CELL + "  # noqa: IPL001")
    )
    write_notebook(
        tmp_path / "other" / "train.ipynb", training_notebook(HAZARD_CELL + "  # noqa: IPL002")
    )
    silenced, other = run_all(tmp_path, [["silenced"], ["other"]])
    assert (silenced.returncode, findings(silenced.stdout)) == (0, [])
    assert other.returncode == 1
    assert [line.split(": IPL")[0] for line in findings(other.stdout)] == [
        "other/train.ipynb:cell 3:2:27"
    ]


def test_fix_repairs_the_cell_and_keeps_the_rest_of_the_notebook(tmp_path: Path) -> None:
    import torch  # the dev extra installs it; the repaired notebook must run

    path = write_notebook(tmp_path / "train.ipynb", training_notebook())
    before = path.read_bytes()
    diff = run(tmp_path, "--diff", "train.ipynb")
    assert diff.returncode == 1 and path.read_bytes() == before
    assert diff.stdout.splitlines()[:3] == [
        "--- a/train.ipynb:cell 3",
        "+++ b/train.ipynb:cell 3",
        "@@ -1,2 +1,2 @@",
    ]
    assert "+y = torch.sigmoid(w * 2); y = y.mul(2)" in diff.stdout.splitlines()

    fixed = run(tmp_path, "--fix", "train.ipynb")
    assert (fixed.returncode, findings(fixed.stdout)) == (0, []), fixed.stdout + fixed.stderr

    original = nbformat.reads(before.decode(), as_version=4)
    notebook = nbformat.read(str(path), as_version=4)
    nbformat.validate(notebook)
    assert notebook.cells[2].source == "w = torch.ones(3, requires_grad=True)\n" + (
        "y = torch.sigmoid(w * 2); y = y.mul(2)"
    )
    assert notebook.cells[2].outputs == original.cells[2].outputs
    assert notebook.metadata == original.metadata
    assert (notebook.nbformat, notebook.nbformat_minor) == (
        original.nbformat,
        original.nbformat_minor,
    )
    for index in (0, 1, 3, 4):
        assert notebook.cells[index] == original.cells[index]
    # Byte for byte, only the fixed source line changed.
    changed = [
        (old, new)
        for old, new in zip(before.splitlines(), path.read_bytes().splitlines(), strict=True)
        if old != new
    ]
    assert changed == [
        (
            b'    "y = torch.sigmoid(w * 2); y.mul_(2)"',
            b'    "y = torch.sigmoid(w * 2); y = y.mul(2)"',
        )
    ]
    once = path.read_bytes()
    assert run(tmp_path, "--fix", "train.ipynb").returncode == 0
    assert path.read_bytes() == once  # a second run changes nothing

    # Under torch: the original cells fail in backward, the fixed ones run.
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        exec(python_of(original), {"torch": torch})
    exec(python_of(notebook), {"torch": torch})


def test_every_output_format_places_notebook_findings(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "train.ipynb", training_notebook())
    file_lines = path.read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(file_lines, 1) if "(w * 2); y.mul_(2)" in text)
    column = file_lines[line - 1].index("y.mul_") + 1
    as_json, sarif, github, lsp = run_all(
        tmp_path, [["--format", fmt, "train.ipynb"] for fmt in ("json", "sarif", "github", "lsp")]
    )

    report = json.loads(as_json.stdout)
    jsonschema.validate(report, schema())
    (finding,) = report
    assert (finding["cell"], finding["line"], finding["column"]) == (3, 2, 27)
    assert [(r["cell"], r["line"]) for r in finding["related"]] == [(3, 2), (5, 1)]
    assert {edit["cell"] for edit in finding["fix"]["edits"]} == {3}

    # The formats that address a file's lines point into the .ipynb file itself.
    (result,) = json.loads(sarif.stdout)["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (line, column)
    assert result["message"]["text"].startswith("cell 3, line 2: `y.mul_()` overwrites")
    assert "fixes" not in result
    assert github.stdout.startswith(f"::error file=train.ipynb,line={line},col={column},")
    assert "::cell 3, line 2: `y.mul_()`" in github.stdout
    (diagnostics,) = json.loads(lsp.stdout).values()
    assert diagnostics[0]["range"]["start"] == {"line": line - 1, "character": column - 1}


def test_a_notebook_that_is_not_valid_json_is_one_ipl999(tmp_path: Path) -> None:
    (tmp_path / "broken.ipynb").write_text('{"cells": [\n  {"cell_type": "code",, }]}\n')
    (tmp_path / "old.ipynb").write_text('{"nbformat": 3, "worksheets": []}\n')
    write_notebook(tmp_path / "train.ipynb", training_notebook())
    proc = run(tmp_path, ".")
    assert proc.returncode == 2
    assert findings(proc.stdout) == [
        "broken.ipynb:2:24: IPL999 cannot parse: not valid JSON: Expecting property name"
        " enclosed in double quotes",
        "old.ipynb:1:1: IPL999 cannot parse: not supported: nbformat 3 (convert it to version 4)",
        HAZARD_LINE,
    ]


def test_a_syntax_error_in_a_cell_is_reported_in_that_cell(tmp_path: Path) -> None:
    write_notebook(
        tmp_path / "train.ipynb", training_notebook("x = torch.ones(2)\ndef f(:\n    pass")
    )
    proc = run(tmp_path, "train.ipynb")
    assert proc.returncode == 2
    assert findings(proc.stdout) == ["train.ipynb:cell 3:2:7: IPL999 cannot parse: invalid syntax"]


def test_a_layout_that_cannot_be_written_back_is_never_rewritten(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "train.ipynb", training_notebook())
    odd = path.read_text(encoding="utf-8").replace('"nbformat": 4', '"nbformat":  4')
    path.write_text(odd, encoding="utf-8")
    proc = run(tmp_path, "--fix", "train.ipynb")
    assert proc.returncode == 2
    assert proc.stderr == (
        "inplace-lint: error: train.ipynb: not fixed: its JSON layout cannot be written back"
        " byte for byte\n"
    )
    assert findings(proc.stdout) == [HAZARD_LINE]
    assert path.read_text(encoding="utf-8") == odd


# --------------------------------------------------------------------------- the joined text


def joined(*sources: str, **metadata: object) -> str:
    notebook = new_notebook(cells=[new_code_cell(s) for s in sources], metadata=metadata)
    return parse(nbformat.writes(notebook).encode()).text


def test_ipython_lines_become_placeholders_and_python_stays() -> None:
    text = joined(
        "for i in range(2):\n    %time f()\n    !echo hi\n"
        'msg = (\n    "a %s"\n    % 3\n)\nfiles = !ls\ntorch.sigmoid?\n'
        's = """\n%not a magic\n"""'
    )
    assert text.splitlines()[1:] == [
        "for i in range(2):",
        "    pass  # inplace-lint: magic 1",
        "    pass  # inplace-lint: magic 2",
        "msg = (",
        '    "a %s"',
        "    % 3",
        ")",
        "pass  # inplace-lint: magic 3",
        "pass  # inplace-lint: magic 4",
        's = """',
        "%not a magic",
        '"""',
    ]


def test_cells_that_are_not_python_are_left_out() -> None:
    assert joined("%%bash\necho hi", "%%time\nx = 1", "", "y = 2") == (
        "# inplace-lint: cell 2\npass  # inplace-lint: magic 1\nx = 1\n"
        "# inplace-lint: cell 3\n# inplace-lint: cell 4\ny = 2\n"
    )
    assert joined("x = 1", language_info={"name": "R"}) == ""
    notebook = new_notebook(cells=[new_raw_cell("x.mul_(2)"), new_code_cell("SELECT 1")])
    notebook.cells[1].metadata["vscode"] = {"languageId": "sql"}
    assert parse(nbformat.writes(notebook).encode()).text == ""


def test_joined_lines_map_back_to_cells() -> None:
    index = CellIndex.of(joined("a = 1\nb = 2", "c = 3"))
    assert [index.locate(line) for line in (2, 3, 5)] == [(1, 1), (1, 2), (2, 1)]
    assert index.label(5) == "1 of cell 2"

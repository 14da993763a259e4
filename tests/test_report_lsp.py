"""``inplace_lint.report.lsp`` (Finding -> LSP Diagnostic) and the server's noqa edits."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inplace_lint import catalogue
from inplace_lint.engine import lint_source
from inplace_lint.finding import Edit, Finding, Fix, Position, Related
from inplace_lint.lsp.actions import noqa_edit, split_lines
from inplace_lint.noqa import noqa_map
from inplace_lint.report import lsp

ROOT = Path(__file__).resolve().parent.parent

FINDING = Finding(
    path="pkg/model.py",
    start=Position(3, 5),
    end=Position(3, 14),
    code="IPL001",
    message="`y.mul_()` overwrites `y`",
    related=(Related(Position(2, 9), "saved for backward by torch.sigmoid here"),),
    fix=Fix(
        "Replace `y.mul_(...)` with `y = y.mul(...)`",
        (
            Edit(Position(3, 5), Position(3, 5), "y = "),
            Edit(Position(3, 7), Position(3, 11), "mul"),
        ),
    ),
)


def test_diagnostic_fields() -> None:
    diagnostic = lsp.to_diagnostic(FINDING, "file:///w/pkg/model.py")
    assert diagnostic == {
        "range": {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 13}},
        "severity": lsp.ERROR,
        "code": "IPL001",
        "source": "inplace-lint",
        "message": "`y.mul_()` overwrites `y`",
        "codeDescription": {"href": catalogue.url("IPL001")},
        "relatedInformation": [
            {
                "location": {
                    "uri": "file:///w/pkg/model.py",
                    "range": {
                        "start": {"line": 1, "character": 8},
                        "end": {"line": 1, "character": 8},
                    },
                },
                "message": "saved for backward by torch.sigmoid here",
            }
        ],
        "data": {
            "fix": {
                "description": "Replace `y.mul_(...)` with `y = y.mul(...)`",
                "safe": True,
                "edits": [
                    {
                        "range": {
                            "start": {"line": 2, "character": 4},
                            "end": {"line": 2, "character": 4},
                        },
                        "newText": "y = ",
                    },
                    {
                        "range": {
                            "start": {"line": 2, "character": 6},
                            "end": {"line": 2, "character": 10},
                        },
                        "newText": "mul",
                    },
                ],
            }
        },
    }
    assert json.loads(json.dumps(diagnostic)) == diagnostic


def test_diagnostic_is_valid_lsp() -> None:
    types = pytest.importorskip("lsprotocol.types")
    converters = pytest.importorskip("lsprotocol.converters")
    converter = converters.get_converter()
    diagnostic = lsp.to_diagnostic(FINDING, "file:///w/pkg/model.py")
    structured = converter.structure(diagnostic, types.Diagnostic)
    assert structured.severity == types.DiagnosticSeverity.Error
    assert converter.unstructure(structured) == diagnostic


def test_optional_fields_and_severity() -> None:
    bare = Finding("a.py", Position(1, 1), Position(1, 1), "IPL999", "cannot parse: x")
    diagnostic = lsp.to_diagnostic(bare, "file:///a.py")
    assert "data" not in diagnostic and "relatedInformation" not in diagnostic
    assert diagnostic["severity"] == lsp.ERROR
    assert diagnostic["codeDescription"]["href"] == catalogue.url("IPL999")
    opt_in = Finding("a.py", Position(1, 1), Position(1, 5), "IPL008", "clamp")
    assert lsp.to_diagnostic(opt_in, "file:///a.py")["severity"] == lsp.WARNING


@pytest.mark.parametrize(
    ("encoding", "character"),
    [("utf-16", 11), ("utf-8", 14), ("utf-32", 10)],
)
def test_columns_in_each_position_encoding(encoding: str, character: int) -> None:
    lines = ["y = 'é😀'; x.mul_(2)"]  # x is the 11th code point
    where = Position(1, 11)
    assert lsp.position(where, lines, encoding) == {"line": 0, "character": character}
    assert lsp.position(where) == {"line": 0, "character": 10}  # no lines: code points


def test_mapping_and_render(tmp_path: Path) -> None:
    clean = str(tmp_path / "clean.py")
    finding = Finding(str(tmp_path / "m.py"), Position(1, 1), Position(1, 2), "IPL002", "m")
    mapping = lsp.to_mapping([finding], paths=[clean, finding.path])
    assert mapping == {
        (tmp_path / "clean.py").as_uri(): [],
        (tmp_path / "m.py").as_uri(): [lsp.to_diagnostic(finding, (tmp_path / "m.py").as_uri())],
    }
    assert json.loads(lsp.render(mapping)) == mapping


def test_importable_and_cli_error_without_pygls() -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.modules["pygls"] = sys.modules["lsprotocol"] = None
        import inplace_lint.report.lsp
        from inplace_lint.cli import main
        sys.exit(main(["lsp"]))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "pip install '.[lsp]'" in proc.stderr


# -- noqa edits ------------------------------------------------------------------------------


def _silence(source: str, code: str) -> tuple[str, list[Finding]]:
    """Apply the noqa edit for the first ``code`` finding; return the text and what is left."""
    (finding,) = [f for f in lint_source(source, "m.py") if f.code == code][:1]
    edit = noqa_edit(source, finding)
    lines = split_lines(source)
    line = lines[edit.start.line - 1]
    assert edit.start.line == edit.end.line
    lines[edit.start.line - 1] = (
        line[: edit.start.column - 1] + edit.text + line[edit.end.column - 1 :]
    )
    text = "\n".join(lines)
    return text, [f for f in lint_source(text, "m.py") if f.line == finding.line]


HEAD = """\
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        gate = torch.sigmoid(self.proj(x))
"""


def test_noqa_goes_at_the_end_of_the_line() -> None:
    text, left = _silence(HEAD + "        gate.mul_(2)   \n        return gate\n", "IPL001")
    assert "        gate.mul_(2)  # noqa: IPL001\n" in text
    assert left == []


def test_noqa_joins_an_existing_code_list_or_comment() -> None:
    text, left = _silence(
        HEAD + "        gate.mul_(2)  # noqa:IPL002\n        return gate\n", "IPL001"
    )
    assert "gate.mul_(2)  # noqa:IPL002,IPL001\n" in text and left == []
    text, left = _silence(HEAD + "        gate.mul_(2)  # scale\n        return gate\n", "IPL001")
    assert "gate.mul_(2)  # scale  # noqa: IPL001\n" in text and left == []
    assert noqa_map(text)[12] == frozenset({"IPL001"})


def test_noqa_never_lands_inside_a_string_or_after_a_backslash() -> None:
    source = HEAD + '        gate.mul_(len("""\n  text\n"""))\n        return gate\n'
    text, left = _silence(source, "IPL001")
    assert '"""))  # noqa: IPL001\n' in text and left == []
    source = HEAD + "        gate.mul_(2) if x is not None \\\n            else None\n"
    text, left = _silence(source + "        return gate\n", "IPL001")
    assert "            else None  # noqa: IPL001\n" in text and left == []

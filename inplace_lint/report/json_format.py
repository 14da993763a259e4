"""``--format json``: a list of findings, one object each (schema: data/findings.schema.json)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from inplace_lint import catalogue
from inplace_lint.finding import Finding, Fix, Position

#: The JSON Schema the output follows, shipped in the package.
SCHEMA_RESOURCE = "findings.schema.json"


def fix_dict(fix: Fix) -> dict[str, Any]:
    """A fix as plain data: its description, whether it is safe, and its 1-based edits."""
    return {
        "description": fix.description,
        "safe": fix.safe,
        "edits": [
            {
                **_cell(edit.start),
                "start_line": edit.start.line,
                "start_column": edit.start.column,
                "end_line": edit.end.line,
                "end_column": edit.end.column,
                "text": edit.text,
            }
            for edit in fix.edits
        ],
    }


def _cell(position: Position) -> dict[str, int]:
    """``{"cell": N}`` for a position in a notebook's cell, else nothing."""
    return {"cell": position.cell} if position.cell is not None else {}


def finding_dict(finding: Finding) -> dict[str, Any]:
    """One finding as plain data; lines and columns are 1-based, the end is exclusive.

    In a notebook, ``cell`` (1-based) comes with every position, and lines count in the cell.
    """
    return {
        "path": finding.path,
        **_cell(finding.start),
        "line": finding.start.line,
        "column": finding.start.column,
        "end_line": finding.end.line,
        "end_column": finding.end.column,
        "code": finding.code,
        "name": catalogue.rule_name(finding.code),
        "message": finding.message,
        "severity": catalogue.severity(finding.code),
        "url": catalogue.url(finding.code),
        "related": [
            {
                **_cell(r.position),
                "line": r.position.line,
                "column": r.position.column,
                "message": r.message,
            }
            for r in finding.related
        ],
        "fix": fix_dict(finding.fix) if finding.fix is not None else None,
    }


def render_json(findings: Iterable[Finding]) -> str:
    """The whole report: a JSON array, indented, ending in a newline."""
    return json.dumps([finding_dict(f) for f in findings], indent=2, ensure_ascii=False) + "\n"


def schema() -> dict[str, Any]:
    """The JSON Schema of :func:`render_json`'s output."""
    from importlib.resources import files

    text = files("inplace_lint.data").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    result: dict[str, Any] = json.loads(text)
    return result

"""``--format lsp``: findings as Language Server Protocol Diagnostic objects (plain JSON data).

The ranges are 0-based and count UTF-16 code units, the LSP default position encoding, when the
source lines are given; without them columns count code points (the same for ASCII text).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from inplace_lint import catalogue
from inplace_lint.finding import Finding, Fix, Position

SOURCE = "inplace-lint"
#: LSP DiagnosticSeverity values.
SEVERITY = {"error": 1, "warning": 2, "information": 3, "hint": 4}


def file_uri(path: str) -> str:
    """The ``file://`` URI of a path, made absolute against the working directory."""
    return Path(os.path.abspath(path)).as_uri()


def lsp_position(position: Position, lines: Sequence[str] | None = None) -> dict[str, int]:
    """A 1-based line and code-point column as an LSP position (0-based, UTF-16 units)."""
    line, column = position.line - 1, position.column - 1
    if lines is not None and 0 <= line < len(lines):
        prefix = lines[line][:column]
        column = len(prefix) + sum(1 for ch in prefix if ord(ch) > 0xFFFF)
    return {"line": max(line, 0), "character": max(column, 0)}


def lsp_range(
    start: Position, end: Position, lines: Sequence[str] | None = None
) -> dict[str, dict[str, int]]:
    return {"start": lsp_position(start, lines), "end": lsp_position(end, lines)}


def fix_data(fix: Fix, lines: Sequence[str] | None = None) -> dict[str, Any]:
    """A fix with its edits as LSP TextEdits, ready for a WorkspaceEdit."""
    return {
        "description": fix.description,
        "safe": fix.safe,
        "edits": [
            {"range": lsp_range(e.start, e.end, lines), "newText": e.text} for e in fix.edits
        ],
    }


def diagnostic(finding: Finding, lines: Sequence[str] | None = None) -> dict[str, Any]:
    """One finding as an LSP Diagnostic; ``data`` carries the fix (or null) and the rule name."""
    uri = file_uri(finding.path)
    return {
        "range": lsp_range(finding.start, finding.end, lines),
        "severity": SEVERITY[catalogue.severity(finding.code)],
        "code": finding.code,
        "codeDescription": {"href": catalogue.url(finding.code)},
        "source": SOURCE,
        "message": finding.message,
        "relatedInformation": [
            {
                "location": {
                    "uri": uri,
                    "range": lsp_range(related.position, related.position, lines),
                },
                "message": related.message,
            }
            for related in finding.related
        ],
        "data": {
            "name": catalogue.rule_name(finding.code),
            "fix": fix_data(finding.fix, lines) if finding.fix is not None else None,
        },
    }


def render_lsp(
    findings: Iterable[Finding],
    paths: Iterable[str] = (),
    lines_of: Callable[[str], Sequence[str] | None] | None = None,
) -> str:
    """``{file URI: [Diagnostic, ...]}``; every path in ``paths`` appears, if only with ``[]``.

    ``lines_of(path)`` gives a file's lines for UTF-16 columns (None: count code points).
    """
    report: dict[str, list[dict[str, Any]]] = {file_uri(p): [] for p in paths}
    cache: dict[str, Sequence[str] | None] = {}
    for finding in findings:
        if lines_of is not None and finding.path not in cache:
            cache[finding.path] = lines_of(finding.path)
        lines = cache.get(finding.path)
        report.setdefault(file_uri(finding.path), []).append(diagnostic(finding, lines))
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"

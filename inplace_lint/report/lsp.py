"""Findings as Language Server Protocol ``Diagnostic`` objects, as plain JSON-able dicts.

Used by the language server (``inplace_lint.lsp``) and by ``--format lsp``. It needs neither
pygls nor lsprotocol. LSP positions are 0-based; columns count code units of the negotiated
position encoding (UTF-16 unless the client asked for another), while a ``Finding`` counts
1-based code points. Pass the document's lines to convert exactly; without them every column
is taken to be one unit per character, which is exact for ASCII lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from inplace_lint import catalogue
from inplace_lint.finding import Edit, Finding, Position

SOURCE = "inplace-lint"
#: LSP ``DiagnosticSeverity`` values.
ERROR, WARNING, INFORMATION, HINT = 1, 2, 3, 4
ENCODINGS = ("utf-16", "utf-8", "utf-32")

Json = dict[str, Any]


def severity(code: str) -> int:
    """The catalogue's severity for ``code`` as an LSP ``DiagnosticSeverity``."""
    return WARNING if catalogue.severity(code) == "warning" else ERROR


def path_to_uri(path: str) -> str:
    """A ``file://`` URI for a path as the CLI reports it (relative to the working directory)."""
    return Path(path).absolute().as_uri()


def position(where: Position, lines: Sequence[str] | None = None, encoding: str = "utf-16") -> Json:
    """A 1-based code-point ``Position`` as a 0-based LSP position in ``encoding`` units."""
    line = max(where.line - 1, 0)
    column = max(where.column - 1, 0)
    if lines is not None and line < len(lines) and encoding != "utf-32":
        text = lines[line]
        prefix = text[:column]
        units = (
            len(prefix.encode("utf-16-le")) // 2
            if encoding == "utf-16"
            else len(prefix.encode("utf-8", "surrogatepass"))
        )
        column = units + max(column - len(text), 0)
    return {"line": line, "character": column}


def span(
    start: Position,
    end: Position,
    lines: Sequence[str] | None = None,
    encoding: str = "utf-16",
) -> Json:
    """An LSP ``Range`` from two 1-based positions (``end`` exclusive)."""
    return {"start": position(start, lines, encoding), "end": position(end, lines, encoding)}


def text_edit(edit: Edit, lines: Sequence[str] | None = None, encoding: str = "utf-16") -> Json:
    """A ``Fix`` edit as an LSP ``TextEdit``."""
    return {"range": span(edit.start, edit.end, lines, encoding), "newText": edit.text}


def to_diagnostic(
    finding: Finding,
    uri: str,
    lines: Sequence[str] | None = None,
    encoding: str = "utf-16",
) -> Json:
    """One finding as an LSP ``Diagnostic`` in the document ``uri``.

    ``data`` is present only when the finding has a fix: ``{"fix": {"description", "safe",
    "edits": [TextEdit, ...]}}``, ready for a code action's ``WorkspaceEdit``.
    """
    diagnostic: Json = {
        "range": span(finding.start, finding.end, lines, encoding),
        "severity": severity(finding.code),
        "code": finding.code,
        "source": SOURCE,
        "message": finding.message,
        "codeDescription": {"href": catalogue.url(finding.code)},
    }
    if finding.related:
        diagnostic["relatedInformation"] = [
            {
                "location": {
                    "uri": uri,
                    "range": span(item.position, item.position, lines, encoding),
                },
                "message": item.message,
            }
            for item in finding.related
        ]
    if finding.fix is not None:
        diagnostic["data"] = {
            "fix": {
                "description": finding.fix.description,
                "safe": finding.fix.safe,
                "edits": [text_edit(e, lines, encoding) for e in finding.fix.edits],
            }
        }
    return diagnostic


def to_mapping(
    findings: Iterable[Finding],
    lines_for: Callable[[str], Sequence[str] | None] | None = None,
    uri_for: Callable[[str], str] = path_to_uri,
    paths: Iterable[str] = (),
) -> dict[str, list[Json]]:
    """``{uri: [Diagnostic, ...]}`` for findings grouped by path, in finding order.

    ``lines_for(path)`` supplies a file's lines for exact UTF-16 columns; every path in
    ``paths`` gets an entry even when it has no findings (so a client clears old ones).
    """
    mapping: dict[str, list[Json]] = {uri_for(p): [] for p in paths}
    cache: dict[str, Sequence[str] | None] = {}
    for finding in findings:
        if lines_for is not None and finding.path not in cache:
            cache[finding.path] = lines_for(finding.path)
        uri = uri_for(finding.path)
        mapping.setdefault(uri, []).append(to_diagnostic(finding, uri, cache.get(finding.path)))
    return mapping


def render(mapping: Mapping[str, Sequence[Json]]) -> str:
    """The ``--format lsp`` document: the mapping as indented JSON, keys sorted."""
    return json.dumps(mapping, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

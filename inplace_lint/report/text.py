"""flake8-style text output: ``path:line:col: CODE message``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from inplace_lint import catalogue
from inplace_lint.finding import Finding


def format_finding(finding: Finding, source_lines: Sequence[str] | None = None) -> str:
    """One finding, and with ``source_lines`` the offending line with a caret under it."""
    cell = f"cell {finding.start.cell}:" if finding.start.cell is not None else ""  # ruff's
    head = f"{finding.path}:{cell}{finding.line}:{finding.column}: {finding.code} {finding.message}"
    if source_lines is None or cell or not 0 < finding.line <= len(source_lines):
        return head
    line = source_lines[finding.line - 1].rstrip("\r\n")
    prefix = "".join(ch if ch == "\t" else " " for ch in line[: finding.column - 1])
    return f"{head}\n    {line}\n    {prefix}^"


def statistics(findings: Sequence[Finding]) -> list[str]:
    """``count  CODE name`` lines, most frequent first."""
    counts = Counter(f.code for f in findings)
    lines = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"{count:<5} {code} {catalogue.rule_name(code)}")
    return lines

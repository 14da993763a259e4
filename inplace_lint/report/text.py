"""flake8-style text output: ``path:line:col: CODE message``, and ruff's closing summary line.

Colour is opt-in per call (the command decides it from ``--color``, the environment and the
terminal); without it every line is plain text that a flake8 problem matcher reads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from inplace_lint import catalogue
from inplace_lint.finding import Finding

RESET = "\x1b[0m"
STYLES = {
    "path": "\x1b[1m",  # bold
    "sep": "\x1b[36m",  # cyan
    "error": "\x1b[1;31m",  # bold red
    "warning": "\x1b[1;33m",  # bold yellow
    "passed": "\x1b[1;32m",  # bold green
}


def paint(text: str, style: str, color: bool) -> str:
    """``text`` wrapped in the ANSI codes of ``style`` when ``color`` is on."""
    return f"{STYLES[style]}{text}{RESET}" if color else text


def format_finding(
    finding: Finding, source_lines: Sequence[str] | None = None, color: bool = False
) -> str:
    """One finding, and with ``source_lines`` the offending line with a caret under it."""
    sep = paint(":", "sep", color)
    severity = catalogue.severity(finding.code)
    cell = f"cell {finding.start.cell}{sep}" if finding.start.cell is not None else ""  # ruff's
    head = (
        f"{paint(finding.path, 'path', color)}{sep}{cell}{finding.line}{sep}{finding.column}{sep} "
        f"{paint(finding.code, severity, color)} {finding.message}"
    )
    if source_lines is None or cell or not 0 < finding.line <= len(source_lines):
        return head
    line = source_lines[finding.line - 1].rstrip("\r\n")
    prefix = "".join(ch if ch == "\t" else " " for ch in line[: finding.column - 1])
    return f"{head}\n    {line}\n    {prefix}{paint('^', severity, color)}"


def statistics(findings: Sequence[Finding]) -> list[str]:
    """``count  CODE name`` lines, most frequent first."""
    counts = Counter(f.code for f in findings)
    lines = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"{count:<5} {code} {catalogue.rule_name(code)}")
    return lines


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _fixable(findings: Sequence[Finding], unsafe_fixes: bool, after_fix: bool) -> list[str]:
    """What the fixes could still do, as notes for the summary."""
    safe = sum(1 for f in findings if f.fix is not None and f.fix.safe)
    unsafe = sum(1 for f in findings if f.fix is not None and not f.fix.safe)
    if after_fix:  # --fix applied what it could; only fixes it was not allowed to try remain
        return [f"{unsafe} fixable with --unsafe-fixes"] if unsafe and not unsafe_fixes else []
    if unsafe_fixes:
        flag = "--fix --unsafe-fixes" if unsafe else "--fix"
        return [f"{safe + unsafe} fixable with {flag}"] if safe + unsafe else []
    notes = [f"{safe} fixable with --fix"] if safe else []
    if unsafe:
        notes.append(
            f"{unsafe} more with --unsafe-fixes"
            if safe
            else f"{unsafe} fixable with --fix --unsafe-fixes"
        )
    return notes


def summary(
    findings: Sequence[Finding],
    *,
    unsafe_fixes: bool = False,
    fixed: int | None = None,
    errors: int = 0,
    color: bool = False,
) -> str:
    """The line that ends a text report, as ruff ends ``ruff check``.

    ``Found 3 findings (2 fixable with --fix, 1 more with --unsafe-fixes).``; after ``--fix``
    (``fixed`` is then the number of fixes applied) ``Found 3 findings (2 fixed, 1 remaining).``;
    ``All checks passed!`` when there is nothing to report. ``errors`` counts the one-line errors
    written to standard error (a missing path, an unreadable file): ``Found 0 findings and 1
    error.``, so such a run never claims that all checks passed.
    """
    notes = [f"{fixed} fixed, {len(findings)} remaining"] if fixed else []
    notes += _fixable(findings, unsafe_fixes, after_fix=fixed is not None)
    total = len(findings) + (fixed or 0)
    if total == 0 and not errors:
        return paint("All checks passed!", "passed", color)
    line = f"Found {_count(total, 'finding')}"
    if notes:
        line += f" ({', '.join(notes)})"
    if errors:
        line += f" and {_count(errors, 'error')}"
    return line + "."

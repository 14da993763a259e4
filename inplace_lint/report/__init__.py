"""Ways to print findings: ``text`` (text.py) and the machine formats rendered here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from inplace_lint.finding import Finding

FORMATS = ("text", "json", "sarif", "github", "lsp")


def render(
    fmt: str,
    findings: Sequence[Finding],
    paths: Sequence[str] = (),
    successful: bool = True,
    lines_of: Callable[[str], Sequence[str] | None] | None = None,
    root: Path | None = None,
) -> str:
    """The whole report in a machine format (not ``text``), ending in a newline when non-empty.

    ``paths`` are every file checked (``lsp`` lists them even without findings), ``successful``
    is False when a file could not be read (SARIF records it), ``lines_of`` gives a file's lines
    (``lsp`` counts UTF-16 units with them) and ``root`` anchors SARIF's relative URIs (cwd).
    """
    if fmt in ("sarif", "github", "lsp") and any(f.start.cell is not None for f in findings):
        from inplace_lint.notebook import placed_in_file  # these formats address file lines

        findings = placed_in_file(findings, lines_of)
    if fmt == "json":
        from inplace_lint.report.json_format import render_json

        return render_json(findings)
    if fmt == "sarif":
        from inplace_lint.report.sarif import render_sarif

        return render_sarif(findings, root, successful)
    if fmt == "github":
        from inplace_lint.report.github import render_github

        return render_github(findings)
    if fmt == "lsp":
        from inplace_lint.report import lsp

        return lsp.render(lsp.to_mapping(findings, lines_of, paths=paths))
    raise ValueError(f"unknown format {fmt!r}")

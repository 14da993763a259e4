"""``--format github``: GitHub Actions workflow commands that annotate the pull request."""

from __future__ import annotations

import os
from collections.abc import Iterable

from inplace_lint import catalogue
from inplace_lint.finding import Finding


def escape_data(text: str) -> str:
    """Escape a command's message: ``%``, carriage return and line feed."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value: as a message, plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _path(path: str) -> str:
    """The path relative to the working directory (the checkout in a workflow) when inside it."""
    if not os.path.isabs(path):
        return path
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def annotation(finding: Finding) -> str:
    """``::error file=F,line=L,col=C,endLine=..,endColumn=..,title=CODE name::message``."""
    level = catalogue.severity(finding.code)
    title = f"{finding.code} {catalogue.rule_name(finding.code)}".strip()
    properties = {
        "file": _path(finding.path),
        "line": str(finding.start.line),
        "col": str(finding.start.column),
        "endLine": str(finding.end.line),
        "endColumn": str(finding.end.column),
        "title": title,
    }
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    return f"::{level} {joined}::{escape_data(finding.message)}"


def render_github(findings: Iterable[Finding]) -> str:
    """One workflow command a line."""
    return "".join(annotation(f) + "\n" for f in findings)

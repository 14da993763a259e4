"""Access to the rule pages in ``rules/`` (shipped in the wheel as ``inplace_lint/_rules``)."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def rules_dir() -> Path | None:
    """The folder holding IPL00N.md pages: the installed copy, else the source checkout's."""
    for candidate in (_PACKAGE / "_rules", _PACKAGE.parent / "rules"):
        if candidate.is_dir():
            return candidate
    return None


def page(code: str) -> str | None:
    """The Markdown page for ``code``, or None if there is none."""
    folder = rules_dir()
    if folder is None:
        return None
    path = folder / f"{code.upper()}.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def url(code: str) -> str:
    """Where a rule's page is published."""
    return f"https://github.com/inplace-lint/inplace-lint/blob/main/rules/{code.upper()}.md"

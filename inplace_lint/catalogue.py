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


#: The published source tree; every rule page lives at ``{REPO_URL}/blob/main/rules/CODE.md``.
REPO_URL = "https://github.com/inplace-lint/inplace-lint"
PARSE_ERROR_NAME = "cannot-parse"
PARSE_ERROR_SUMMARY = "the file cannot be decoded or parsed"
#: Findings are errors unless listed here (reports map this to their own levels).
_SEVERITY = {"IPL008": "warning"}


def url(code: str) -> str:
    """Where a rule's page is published."""
    return f"{REPO_URL}/blob/main/rules/{code.upper()}.md"


def severity(code: str) -> str:
    """``"error"`` or ``"warning"``."""
    return _SEVERITY.get(code.upper(), "error")


def rule_name(code: str) -> str:
    """The rule's name (``saved-for-backward``), or ``""`` for an unknown code."""
    from inplace_lint.checks import PARSE_ERROR, rule_by_code

    if code == PARSE_ERROR:
        return PARSE_ERROR_NAME
    rule = rule_by_code(code)
    return rule.name if rule is not None else ""


def description(code: str) -> str:
    """The rule page's opening paragraph, on one line; the rule's summary if there is no page."""
    from inplace_lint.checks import PARSE_ERROR, rule_by_code

    text = page(code)
    if text is not None:
        paragraph: list[str] = []
        for line in text.splitlines():
            if line.startswith("#") and not paragraph:
                continue
            if not line.strip():
                if paragraph:
                    break
                continue
            paragraph.append(line.strip())
        if paragraph:
            return " ".join(paragraph)
    if code == PARSE_ERROR:
        return PARSE_ERROR_SUMMARY
    rule = rule_by_code(code)
    return rule.summary if rule is not None else ""

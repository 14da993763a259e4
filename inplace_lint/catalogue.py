"""What reports say about a code: its rule's name, severity and summary, and its rule page.

The rule pages live in ``rules/`` (shipped in the wheel as ``inplace_lint/_rules``). Every
setting of a rule is a field of its ``Rule`` in ``checks/``; IPL999, which the engine reports
itself when a file cannot be read or parsed, is described here by a record of the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inplace_lint.checks import PARSE_ERROR, Rule, Severity, all_rules, rule_by_code

_PACKAGE = Path(__file__).resolve().parent

#: The published source tree; every rule page lives at ``{REPO_URL}/blob/main/rules/CODE.md``.
REPO_URL = "https://github.com/inplace-lint/inplace-lint"


@dataclass(frozen=True)
class EngineCode:
    """A code the engine reports without a rule behind it: the descriptive fields of a Rule."""

    code: str
    name: str
    summary: str
    default: bool = True
    severity: Severity = "error"


PARSE_ERROR_CODE = EngineCode(PARSE_ERROR, "cannot-parse", "the file cannot be decoded or parsed")


def described(code: str) -> Rule | EngineCode | None:
    """The rule (or engine code) with exactly this code, or None for an unknown code."""
    return PARSE_ERROR_CODE if code == PARSE_ERROR else rule_by_code(code)


def every_code() -> tuple[Rule | EngineCode, ...]:
    """Every rule by code, then IPL999."""
    return (*all_rules(), PARSE_ERROR_CODE)


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
    return f"{REPO_URL}/blob/main/rules/{code.upper()}.md"


def severity(code: str) -> Severity:
    """``"error"`` or ``"warning"`` (``"error"`` for an unknown code)."""
    found = described(code.upper())
    return found.severity if found is not None else "error"


def rule_name(code: str) -> str:
    """The rule's name (``saved-for-backward``), or ``""`` for an unknown code."""
    found = described(code)
    return found.name if found is not None else ""


def description(code: str) -> str:
    """The rule page's opening paragraph, on one line; the rule's summary if there is no page."""
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
    found = described(code)
    return found.summary if found is not None else ""

"""The language server's hover text for findings: short, with a link to the full rule page.

An editor shows a hover in a small popup, so it gets what a user needs at the cursor (the
finding's message, the rule's code and name, the opening paragraph of its page, whether a quick
fix exists) and a link to the page for the rest. Every part is clipped, and the whole text stays
under ``HOVER_LIMIT`` characters however many findings share the position.
"""

from __future__ import annotations

from collections.abc import Sequence

from inplace_lint import catalogue
from inplace_lint.finding import Finding

#: The most characters a hover holds (an 18 kB rule page is a page, not a hover).
HOVER_LIMIT = 2000
#: The most characters of a finding's message, and of the rule's summary paragraph.
_MESSAGE_LIMIT = 600
_SUMMARY_LIMIT = 400
_SEPARATOR = "\n\n---\n\n"


def hover_markdown(findings: Sequence[Finding]) -> str:
    """Markdown for the findings under the cursor, at most ``HOVER_LIMIT`` characters."""
    sections: list[str] = []
    used = 0
    for index, finding in enumerate(findings):
        section = finding_markdown(finding)
        cost = len(section) + (len(_SEPARATOR) if sections else 0)
        rest = len(findings) - index
        # keep room for the line that says how many were left out
        if sections and used + cost + len(_SEPARATOR) + 40 > HOVER_LIMIT:
            sections.append(f"*{rest} more finding{'s' if rest > 1 else ''} here*")
            break
        sections.append(section)
        used += cost
    return _SEPARATOR.join(sections)[:HOVER_LIMIT]


def finding_markdown(finding: Finding) -> str:
    """One finding: ``**CODE** (name): message``, the rule's summary, its fix and its page."""
    code = finding.code
    name = catalogue.rule_name(code) or "unknown rule"
    lines = [f"**{code}** ({name}): {_clip(finding.message, _MESSAGE_LIMIT)}"]
    summary = catalogue.description(code)
    if summary:
        lines.append(_clip(summary, _SUMMARY_LIMIT))
    if finding.fix is not None:
        kind = (
            "Quick fix"
            if finding.fix.safe
            else "Unsafe quick fix (it can change what other code sees)"
        )
        lines.append(f"{kind}: {_clip(finding.fix.description, 200)}")
    if catalogue.described(code) is not None:
        lines.append(f"[{code} {name}: the full rule page]({catalogue.url(code)})")
    return "\n\n".join(lines)


def _clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word boundary, with an ellipsis if cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"

"""Which fixes the language server offers: the verified ones, at a cost an edit can afford.

Every fix goes through :func:`inplace_lint.autofix.verified` (the check the command line
runs) before a diagnostic carries it; a quick fix is checked once more by itself, as the
editor applies it, when a code action asks for it (:meth:`FixVerdicts.fails_alone`).

An edit changes one place, so most fixes of a document were already verified on its previous
text. A verdict is kept per fix under a key made of its finding's code, its description, its
edits relative to the top-level block that holds them and that block's text: a fix whose
block did not change is not verified again. Limit: a change elsewhere in the module (a new
alias at module level) can change a verdict without changing that block; the quick fix's own
check, on the exact text, still keeps such a fix out of the editor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from inplace_lint.autofix import Lint, verified, verify
from inplace_lint.finding import Finding
from inplace_lint.lsp.actions import split_lines

__all__ = ["FixVerdicts"]

#: Verdicts kept per document before the memo starts over.
_LIMIT = 2048

_Key = tuple[str, str, str, tuple[tuple[int, int, int, int, str], ...]]


def _block(lines: Sequence[str], first: int, last: int) -> tuple[int, int]:
    """The 1-based lines of the top-level block around lines ``first``..``last``: from the
    nearest line at or above ``first`` that starts at column 1 to the line before the next
    one below ``last``."""
    start = first
    while start > 1 and not _top_level(lines[start - 1]):
        start -= 1
    end = last
    while end < len(lines) and not _top_level(lines[end]):
        end += 1
    return start, end


def _top_level(line: str) -> bool:
    return bool(line) and not line[0].isspace() and not line.startswith("#")


class FixVerdicts:
    """The verdicts on one document's fixes, kept between its versions."""

    def __init__(self) -> None:
        self._kept: dict[_Key, str] = {}
        self._alone: dict[tuple[str, Finding], str] = {}

    def _key(self, lines: Sequence[str], finding: Finding) -> _Key | None:
        fix = finding.fix
        if fix is None:
            return None
        touched = [finding.start.line, *(e.start.line for e in fix.edits)]
        touched += [e.end.line for e in fix.edits]
        if min(touched) < 1 or max(touched) > len(lines):
            return None
        start, end = _block(lines, min(touched), max(touched))
        edits = tuple(
            (e.start.line - start, e.start.column, e.end.line - start, e.end.column, e.text)
            for e in fix.edits
        )
        return finding.code, fix.description, "\n".join(lines[start - 1 : end]), edits

    def publishable(
        self, text: str, path: str, findings: list[Finding], lint: Lint
    ) -> list[Finding]:
        """``findings`` with only verified fixes; verifies those not judged on a block like
        theirs before."""
        lines = split_lines(text)  # the lines findings count (str.splitlines has more breaks)
        keys = {id(f): self._key(lines, f) for f in findings if f.fix is not None}
        unknown = [f for f in findings if f.fix is not None and keys[id(f)] not in self._kept]
        reasons: dict[int, str] = {}
        if unknown:
            _, dropped = verified(text, path, findings, lint=lint, only=unknown, together=True)
            reasons = {id(d.finding): d.reason for d in dropped}
            if len(self._kept) > _LIMIT:
                self._kept.clear()
            for finding in unknown:
                key = keys[id(finding)]
                if key is not None:
                    self._kept[key] = reasons.get(id(finding), "")
        out = []
        for finding in findings:
            key = keys.get(id(finding))
            why = reasons.get(id(finding)) if key is None else self._kept.get(key)
            out.append(replace(finding, fix=None) if why else finding)
        return out

    def fails_alone(
        self, text: str, findings: Sequence[Finding], finding: Finding, lint: Lint
    ) -> str:
        """Why ``finding``'s fix, applied by itself to ``text``, fails verification; ""
        when it passes. Remembered per text."""
        key = (text, finding)
        if key not in self._alone:
            if len(self._alone) > _LIMIT // 8:
                self._alone.clear()
            self._alone[key] = verify(text, findings, [finding], lint) or ""
        return self._alone[key]

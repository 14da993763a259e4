"""Every offered fix on generated programs: it parses and its finding is gone.

Programs come from ``tools/progen.py`` (small PyTorch programs with in-place statements of
every kind the engine knows). For each one, the fixes that a report offers (``verified``: what
JSON, SARIF, the language server and the summary carry) are applied one at a time, as an
editor's quick fix applies them, and all together, as ``--fix`` and ``--fix --unsafe-fixes``
apply them. Each result must parse (Python's own parser, not the verifier's) and be linted
again without the fixed finding; ``--fix`` must be idempotent. A few derandomised examples
here; ``bench/fix_fuzz_long.py`` runs many fresh ones.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from inplace_lint.autofix import apply_edits, fix_text, verified, verify
from inplace_lint.engine import lint_source
from inplace_lint.finding import Edit, Finding, Position

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from progen import Program, programs  # noqa: E402

#: ``INPLACE_LINT_FUZZ_SCALE`` multiplies the example count (bench/fix_fuzz_long.py sets it).
SCALE = max(1, int(os.environ.get("INPLACE_LINT_FUZZ_SCALE", "1") or 1))
RANDOM = os.environ.get("INPLACE_LINT_FUZZ_RANDOM") == "1"
EXAMPLES = 8
PATH = "generated.py"
_NEWLINE = re.compile(r"\r\n|\r|\n")


def _offset(starts: list[int], where: Position) -> int:
    return starts[where.line - 1] + where.column - 1


def _moved(text: str, edits: tuple[Edit, ...], where: Position) -> Position:
    """Where ``where`` of ``text`` lands once ``edits`` are applied (an insertion at it goes
    before it), computed here independently of the autofix's own bookkeeping."""
    starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
    offset = target = _offset(starts, where)
    for edit in edits:
        begin, end = _offset(starts, edit.start), _offset(starts, edit.end)
        if end <= offset:
            target += len(edit.text) - (end - begin)
    after = apply_edits(text, edits)
    new_starts = [0, *(m.end() for m in _NEWLINE.finditer(after))]
    line = bisect.bisect_right(new_starts, target)
    return Position(line, target - new_starts[line - 1] + 1)


def _gone(source: str, finding: Finding, edits: tuple[Edit, ...], after: str) -> bool:
    moved = _moved(source, edits, finding.start)
    return not any(f.code == finding.code and f.start == moved for f in lint_source(after, PATH))


def _check_alone(source: str, found: list[Finding], offered: list[Finding]) -> None:
    """An editor applies one offered fix by itself: it verifies alone, parses, and the
    finding is gone at the place the edits moved it to."""

    def lint(text: str) -> list[Finding]:
        return lint_source(text, PATH)

    for finding in offered:
        if finding.fix is None:
            continue
        assert verify(source, found, [finding], lint) is None  # what is offered verifies alone
        after = apply_edits(source, finding.fix.edits)
        ast.parse(after)
        assert _gone(source, finding, finding.fix.edits, after), (finding, after)


def _check_together(source: str, found: list[Finding]) -> None:
    """``--fix``, safe and then with unsafe fixes: the result parses, adds no finding, and a
    second run changes nothing."""
    codes = {f.code for f in found}
    for unsafe in (False, True):
        result = fix_text(source, PATH, unsafe=unsafe)
        ast.parse(result.after)
        assert all(f.fix is not None and (unsafe or f.fix.safe) for f in result.applied)
        assert len(result.remaining) <= len(found)
        assert {f.code for f in result.remaining} <= codes
        again = fix_text(result.after, PATH, unsafe=unsafe)
        assert again.applied == [] and again.after == result.after


@settings(
    max_examples=EXAMPLES * SCALE,
    deadline=None,
    database=None,
    derandomize=not RANDOM,
    suppress_health_check=list(HealthCheck),
)
@given(programs())
def test_every_offered_fix_parses_and_removes_its_finding(program: Program) -> None:
    source = program.source()
    found = lint_source(source, PATH)
    offered, dropped = verified(source, PATH, found)
    assert len(offered) == len(found)
    assert all(d.finding.fix is not None for d in dropped)
    _check_alone(source, found, offered)
    _check_together(source, found)

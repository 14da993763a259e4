"""IPL002: a tensor's old value is read again after an in-place write changed it."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from inplace_lint.checks.base import LineOf, RawFinding, Rule
from inplace_lint.facts.events import Facts
from inplace_lint.facts.model import Write


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in facts.stale_reads:
        write = event.write
        if write.via_call is not None or id(write.node) in seen or _nudge(write):
            continue
        seen.add(id(write.node))
        target = f"`{write.name or write.target}`" if write.target else "a tensor"
        if event.stored:
            message = (
                f"{write.what} changes {target} in place after it was stored in `{event.name}` "
                "(line ",
                LineOf(event.read),
                f"); later reads of `{event.name}` see the changed value",
            )
            related = ((event.read, f"stored in `{event.name}` here"), *write.related)
        else:
            message = (
                f"{write.what} changes {target} in place, but `{event.name}` reads its old "
                "value again at line ",
                LineOf(event.read),
                f" ({event.how})",
            )
            related = ((event.read, f"`{event.name}` read again here"), *write.related)
        yield RawFinding("IPL002", write.node, write.stmt, message, related)


#: Largest constant that counts as a numerical nudge rather than a change of value.
NUDGE = 1e-4


def _nudge(write: Write) -> bool:
    """``edges[..., -1] += 1e-6``: an epsilon for numerical safety; a read of the value from
    before it differs by no more than rounding does, so it is not a stale read."""
    small = write.small_statement()
    if not isinstance(small, cst.AugAssign):
        return False
    if not isinstance(small.operator, cst.AddAssign | cst.SubtractAssign):
        return False
    value = small.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    if not isinstance(value, cst.Float):
        return False
    try:
        return 0.0 < float(value.value) <= NUDGE
    except ValueError:
        return False


RULE = Rule(
    code="IPL002",
    name="stale-read",
    summary="in-place write to a tensor whose old value is read again later",
    check=check,
    supersedes=("IPL004",),
    fix="out-of-place",
)

"""IPL008 (opt-in): ``clamp(min=0)`` used as a ReLU has gradient 1 at exactly 0."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from inplace_lint.checks.base import RawFinding, Rule
from inplace_lint.facts.classes import literal_zero
from inplace_lint.facts.events import Facts
from inplace_lint.facts.syntax import is_none


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in facts.clamp_calls:
        if event.no_gradient or not _relu_bounds(event.method, event.bounds):
            continue
        if id(event.node) in seen:
            continue
        seen.add(id(event.node))
        message = (
            f"`{event.text}` is used as a ReLU; its gradient at exactly 0 is 1 where relu's is 0: "
            "use relu() if a ReLU is meant"
        )
        yield RawFinding("IPL008", event.node, event.stmt, message)


def _relu_bounds(method: str, args: tuple[cst.Arg, ...]) -> bool:
    """A lower bound of literal zero and no upper bound: ``clamp(min=0)``, ``clamp(x, 0)``,
    ``clamp_min(0)``, ``clip(0, None)``."""
    keyword = {a.keyword.value: a.value for a in args if a.keyword is not None}
    positional = [a.value for a in args if a.keyword is None and not a.star]
    if method.startswith("clamp_min"):
        return (bool(positional) and literal_zero(positional[0])) or literal_zero(
            keyword.get("min")
        )
    low = keyword.get("min", positional[0] if positional else None)
    high = keyword.get("max", positional[1] if len(positional) > 1 else None)
    return literal_zero(low) and (high is None or is_none(high))


RULE = Rule(
    code="IPL008",
    name="clamp-as-relu",
    summary="clamp(min=0) used as a ReLU (gradient at 0 differs); opt-in",
    check=check,
    default=False,
    severity="warning",
    screen_words=("clamp", "clip"),
)

"""IPL008 (opt-in): ``clamp(min=0)`` used as a ReLU has gradient 1 at exactly 0."""

from __future__ import annotations

from collections.abc import Iterator

from inplace_lint.checks.base import RawFinding, Rule
from inplace_lint.facts.events import Facts


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in facts.clamp_relus:
        if id(event.node) in seen:
            continue
        seen.add(id(event.node))
        message = (
            f"`{event.text}` is used as a ReLU; its gradient at exactly 0 is 1 where relu's is 0: "
            "use relu() if a ReLU is meant"
        )
        yield RawFinding("IPL008", event.node, event.stmt, message)


RULE = Rule(
    code="IPL008",
    name="clamp-as-relu",
    summary="clamp(min=0) used as a ReLU (gradient at 0 differs); opt-in",
    check=check,
    default=False,
    severity="warning",
    screen_words=("clamp", "clip"),
)

"""IPL002: a tensor's old value is read again after an in-place write changed it."""

from __future__ import annotations

from collections.abc import Iterator

from inplace_lint.checks.base import RawFinding, Rule
from inplace_lint.facts.events import Facts


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in facts.stale_reads:
        write = event.write
        if write.via_call is not None or id(write.node) in seen:
            continue
        seen.add(id(write.node))
        target = f"`{write.name or write.target}`" if write.target else "a tensor"
        if event.stored:
            message = (
                f"{write.what} changes {target} in place after it was stored in `{event.name}` "
                f"(line {{line:{id(event.read)}}}); later reads of `{event.name}` see the "
                "changed value"
            )
            related = ((event.read, f"stored in `{event.name}` here"), *write.related)
        else:
            message = (
                f"{write.what} changes {target} in place, but `{event.name}` reads its old "
                f"value again at line {{line:{id(event.read)}}} ({event.how})"
            )
            related = ((event.read, f"`{event.name}` read again here"), *write.related)
        yield RawFinding("IPL002", write.node, write.stmt, message, related)


RULE = Rule(
    code="IPL002",
    name="stale-read",
    summary="in-place write to a tensor whose old value is read again later",
    check=check,
)

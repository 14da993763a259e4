"""IPL005: a custom autograd.Function mutates grad_output, saved tensors or its inputs."""

from __future__ import annotations

from collections.abc import Iterator

from inplace_lint.checks.base import RawFinding, Rule
from inplace_lint.facts.events import Facts


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in facts.function_writes:
        write = event.write
        if id(write.node) in seen:
            continue
        seen.add(id(write.node))
        if event.role == "input":
            message = (
                f"{write.what} mutates forward input `{event.name}` in place without "
                f"ctx.mark_dirty({event.name}); autograd's view of it is wrong"
            )
        else:
            message = (
                f"{write.what} writes in place to {event.role} `{event.name}` in backward; "
                "clone() it first, other consumers of the gradient see the change"
            )
        yield RawFinding("IPL005", write.node, write.stmt, message, write.related)


RULE = Rule(
    code="IPL005",
    name="function-backward-mutation",
    summary="custom autograd.Function edits grad_output, saved tensors or inputs in place",
    check=check,
    supersedes=("IPL002", "IPL004"),
    fix="clone-in-backward",
)

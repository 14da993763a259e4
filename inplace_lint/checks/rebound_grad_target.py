"""IPL006: gradients are asked w.r.t. a name that an in-place op rebound or overwrote."""

from __future__ import annotations

from collections.abc import Iterator

from inplace_lint.checks.base import LineOf, RawFinding, Rule
from inplace_lint.facts.events import Facts


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in facts.grad_targets:
        if id(event.node) in seen:
            continue
        seen.add(id(event.node))
        message = (
            f"gradient requested w.r.t. `{event.name}`, which {event.how}; autograd "
            "differentiates the in-place result, not the original value (grad call at line ",
            LineOf(event.grad_call),
            ")",
        )
        related = ((event.grad_call, "gradient requested here"),)
        yield RawFinding("IPL006", event.node, event.stmt, message, related)


RULE = Rule(
    code="IPL006",
    name="rebound-grad-target",
    summary="autograd.grad/backward(inputs=) w.r.t. a tensor rebound or overwritten in place",
    check=check,
    supersedes=("IPL002", "IPL004"),
    fix="out-of-place",
)

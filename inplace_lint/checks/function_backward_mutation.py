"""IPL005: a custom autograd.Function mutates grad_output, saved tensors or its inputs."""

from __future__ import annotations

from collections.abc import Iterator

from inplace_lint.checks.base import LineOf, Message, RawFinding, Rule
from inplace_lint.facts.events import Facts, FunctionWrite
from inplace_lint.facts.model import Write


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in facts.function_writes:
        write = event.write
        if id(write.node) in seen:
            continue
        if event.role == "owned saved tensor" and facts.retained_at is None:
            continue  # made by forward for backward alone: only a second backward sees it
        seen.add(id(write.node))
        related = write.related
        message: Message
        if event.role == "owned saved tensor":
            message = (
                f"{write.what} writes in place to saved tensor `{event.name}`"
                f"{_through(write, event)} in backward; a backward over the retained graph "
                "(line ",
                LineOf(facts.retained_at),
                ") finds it changed: clone() it first",
            )
            related = (*related, (facts.retained_at, "the graph is kept for another backward"))
        elif event.role == "dirty input":
            message = (
                f"{write.what} writes input `{event.name}`, which forward marks dirty but does "
                "not return; torch raises 'Some elements marked as dirty during the forward "
                "method were not returned as output'"
            )
        elif event.role == "input":
            message = (
                f"{write.what} mutates forward input `{event.name}` in place without "
                f"ctx.mark_dirty({event.name}); autograd's view of it is wrong"
            )
        elif event.role == "grad_output":
            message = (
                f"{write.what} writes in place to {_gradient(event.name)}{_through(write, event)} "
                "in backward; clone() it first, other consumers of the gradient see the change"
            )
        else:
            message = (
                f"{write.what} writes in place to saved tensor `{event.name}`"
                f"{_through(write, event)} in backward; clone() it first, other consumers of "
                "the tensor see the change"
            )
        yield RawFinding("IPL005", write.node, write.stmt, message, related)


def _gradient(name: str) -> str:
    """The incoming gradient, named once: `grad_output`, or the incoming gradient `g`."""
    return f"`{name}`" if "grad" in name else f"the incoming gradient `{name}`"


def _through(write: Write, event: FunctionWrite) -> str:
    """`` (through `grad_input`)`` when the write goes through another name for it."""
    if write.name and write.name != event.name:
        return f" (through `{write.name}`)"
    return ""


RULE = Rule(
    code="IPL005",
    name="function-backward-mutation",
    summary="custom autograd.Function edits grad_output, saved tensors or inputs in place",
    check=check,
    supersedes=("IPL002", "IPL004"),
    fix="clone-in-backward",
    evidence=("function-write",),
)

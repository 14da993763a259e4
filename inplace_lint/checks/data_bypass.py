"""IPL007: an in-place write through `.data`/`.detach()` hides a change from autograd."""

from __future__ import annotations

from collections.abc import Iterator

from inplace_lint.checks.base import LineOf, RawFinding, Rule, saver
from inplace_lint.facts.events import Facts


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in facts.saved_overwrites:
        write = event.write
        bypass = write.hidden or write.via_detach
        if not bypass or write.via_call is not None or id(write.node) in seen:
            continue
        seen.add(id(write.node))
        if write.hidden:
            outcome = "autograd cannot see the change and the gradients are silently wrong"
        else:
            outcome = "`.detach()` shares the version counter, so backward will raise"
        message = (
            f"{write.what} changes `{write.name or write.target}` behind autograd's back after "
            f"{saver(event.record.op, event.record.role)} saved it for backward (line ",
            LineOf(event.record.node),
            f"); {outcome}",
        )
        related = ((event.record.node, f"saved for backward by {event.record.op} here"),)
        yield RawFinding("IPL007", write.node, write.stmt, message, related)
    for read in facts.hidden_reads:
        write = read.write
        if write.in_state_update or id(write.node) in seen:
            continue  # a state update (init, optimizer step, EMA) writes .data on purpose
        if read.returned_by and not _called(facts, read.returned_by):
            # hands the caller's tensor back written, with no caller in the run to judge by:
            # in place by contract (an initialiser's ``return tensor``), as for IPL004
            continue
        seen.add(id(write.node))
        via = "`.detach()`" if write.via_detach else "`.data`"
        message = (
            f"{write.what} changes `{write.name or write.target}` through {via}, hidden from "
            "autograd, and "
            f"`{read.name}` is used again at line ",
            LineOf(read.read),
            "; gradients through it are silently wrong",
        )
        yield RawFinding(
            "IPL007", write.node, write.stmt, message, ((read.read, "used again here"),)
        )


def _called(facts: Facts, function: str) -> bool:
    return function in facts.called or any(
        name.rsplit(".", 1)[-1] == function for name in facts.called_elsewhere
    )


RULE = Rule(
    code="IPL007",
    name="data-bypass",
    summary="in-place write through .data/.detach() to a tensor in a live graph",
    check=check,
    supersedes=("IPL002", "IPL004"),
    evidence=("silent", "bypass-twin"),
    fix="bypass-out-of-place",
)

"""IPL004: a function writes in place to a tensor argument that its caller still sees."""

from __future__ import annotations

from collections.abc import Iterator

from inplace_lint.checks.base import LineOf, RawFinding, Rule, callers_saved_tensor
from inplace_lint.facts.events import ArgWrite, Facts
from inplace_lint.facts.heuristics import zeroes_padding
from inplace_lint.facts.summaries import destination
from inplace_lint.facts.syntax import copies_into


def check(facts: Facts) -> Iterator[RawFinding]:
    # write nodes already reported, by the first reason found; a write to a leaf a caller
    # passes is IPL003's (``leaf_inplace``): torch raises at the call whatever comes after
    seen: set[int] = {id(e.write.node) for e in facts.leaf_arg_writes if e.write.via_call}
    yield from _caller_harmed(facts, seen)
    yield from _no_caller_to_judge(facts, seen)


def _caller_harmed(facts: Facts, seen: set[int]) -> Iterator[RawFinding]:
    """A caller in this file is harmed: its tensor was saved for backward or is read again."""
    for event in facts.saved_overwrites:
        write = event.write
        if write.via_call is None or write.hidden or id(write.node) in seen:
            continue
        seen.add(id(write.node))
        yield callers_saved_tensor("IPL004", event)  # IPL001's, unless hidden by a detach
    for read in facts.stale_reads:
        write = read.write
        if write.via_call is None or id(write.node) in seen:
            continue
        seen.add(id(write.node))
        if read.name == write.target:
            again: tuple[str | LineOf, ...] = (f") and reads `{read.name}` again at line ",)
        else:  # the caller reads the tensor through another name: an alias, view or container
            again = (
                f") and reads it again through `{read.name}`, which shares its data, at line ",
            )
        message = (
            f"{write.what} mutates argument `{write.param}` in place; the caller passes "
            f"`{write.target}` (line ",
            LineOf(write.via_call),
            *again,
            LineOf(read.read),
            ", expecting the old value",
        )
        related = (
            (write.via_call, f"called with `{write.target}` here"),
            (read.read, f"caller reads `{read.name}` again here"),
        )
        yield RawFinding("IPL004", write.node, write.stmt, message, related)


def _no_caller_to_judge(facts: Facts, seen: set[int]) -> Iterator[RawFinding]:
    """No caller in this file to judge by: report helpers that are not in place by contract."""
    for event in facts.arg_writes:
        write = event.write
        if id(write.node) in seen:
            continue
        checkpoint = facts.checkpointed.get(event.function) or facts.checkpointed.get(
            event.qualified
        )
        if checkpoint is None and (
            write.nested  # through two calls with no caller to judge: too far from evidence
            or _in_place_by_contract(event)
            or not event.evidence
            or event.function in facts.called
            or event.qualified in facts.called_elsewhere
            or (event.qualified, event.param) in facts.judged
            or destination(event.param)
            or _never_given_a_tensor(facts, event)
            or (event.role != "forward" and not event.side_effect)
        ):
            # Judged at a caller here, or in place by contract: an output buffer, a procedure
            # that returns nothing, or a helper that returns the tensor it wrote.
            continue
        seen.add(id(write.node))
        message: tuple[str | LineOf, ...] = (
            f"{write.what} mutates argument `{event.param}` of `{event.function}()` in place; "
            "the caller's tensor changes too",
        )
        related = list(write.related)
        if checkpoint is not None:
            message += (
                f"; `{event.function}` runs under torch.utils.checkpoint (line ",
                LineOf(checkpoint),
                "), whose recomputation sees the mutated input",
            )
            related.append((checkpoint, "checkpointed here"))
        yield RawFinding("IPL004", write.node, write.stmt, message, tuple(related))


def _in_place_by_contract(event: ArgWrite) -> bool:
    """The write is meant: the function says it writes in place (``contract``), the write runs
    under no_grad or an ``inplace`` flag, copies into a destination (``dst.copy_(src)``), or
    zeroes padding positions no caller reads (``h[~attention_mask] = 0``)."""
    return bool(
        event.contract
        or event.under_no_grad
        or event.inplace_guarded
        or copies_into(event.write)
        or zeroes_padding(event.write)
    )


def _never_given_a_tensor(facts: Facts, event: ArgWrite) -> bool:
    """Same-file calls pass a list or dict there (or never a tensor): not a tensor after all."""
    keys = [
        (callee, key)
        for callee in {event.function, event.qualified}
        for key in (event.index, event.param)
    ]
    if any(key in facts.passed_container for key in keys):
        return True
    seen = [facts.passed_tensor[key] for key in keys if key in facts.passed_tensor]
    return bool(seen) and not any(seen)


RULE = Rule(
    code="IPL004",
    name="argument-mutation",
    summary="function writes in place to a tensor argument its caller still uses",
    check=check,
    evidence=("argument-twin",),
    fix="out-of-place",
)

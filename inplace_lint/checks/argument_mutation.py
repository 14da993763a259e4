"""IPL004: a function writes in place to a tensor argument that its caller still sees."""

from __future__ import annotations

from collections.abc import Iterator

from inplace_lint.checks.base import RawFinding, Rule
from inplace_lint.facts.events import Facts


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in facts.arg_writes:
        write = event.write
        if id(write.node) in seen:
            continue
        checkpoint = facts.checkpointed.get(event.function)
        reads = [
            read
            for index, keyword, read in facts.call_reads.get(event.function, [])
            if keyword == event.param or (not keyword and index == event.index)
        ]
        if checkpoint is None:
            if event.exempt or not event.evidence:
                continue
            if event.function in facts.called and not reads:
                continue
        seen.add(id(write.node))
        message = (
            f"{write.what} mutates argument `{event.param}` of `{event.function}()` in place; "
            "the caller's tensor changes too"
        )
        related = list(write.related)
        if checkpoint is not None:
            message += (
                f"; `{event.function}` runs under torch.utils.checkpoint (line "
                f"{{line:{id(checkpoint)}}}), whose recomputation sees the mutated input"
            )
            related.append((checkpoint, "checkpointed here"))
        if reads:
            first = reads[0]
            message += f"; the caller reads `{first.name}` again at line {{line:{id(first.read)}}}"
            related.append((first.read, f"caller reads `{first.name}` again here"))
        yield RawFinding("IPL004", write.node, write.stmt, message, tuple(related))


RULE = Rule(
    code="IPL004",
    name="argument-mutation",
    summary="function writes in place to a tensor argument its caller still uses",
    check=check,
)

"""What a summarised write means at one call: whether the call passes the written parameter,
how the write is described there, and which passed tensors its new values come from."""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.model import Kind, Value
from inplace_lint.facts.summaries import Mutation


def names_argument(args: list[tuple[str, cst.Arg, list[Value]]], mutation: Mutation) -> bool:
    """Whether a call's arguments name the mutated parameter (by keyword or position)."""
    positional = [arg for keyword, arg, _ in args if not keyword and not arg.star]
    return any(keyword == mutation.param for keyword, _, _ in args) or mutation.index < len(
        positional
    )


def described(mutation: Mutation, callee: str) -> str:
    """``.div_()`` in `norm()`, and the function called that reached it, if another."""
    if mutation.through and mutation.through != callee:
        return f"{mutation.what} in `{mutation.through}()` (called by `{callee}()`)"
    if mutation.origin:
        return f"{mutation.what} in `{callee}()` ({mutation.origin})"
    return f"{mutation.what} in `{callee}()`"


def source_values(
    mutation: Mutation,
    positional: list[tuple[cst.Arg, list[Value]]],
    keywords: dict[str, tuple[cst.Arg, list[Value]]],
) -> list[Value]:
    """The tensors a call passes for the parameters a summarised write reads its new values
    from (``Mutation.sources``)."""
    found: list[Value] = []
    for name, position in mutation.sources:
        passed = keywords.get(name)
        if passed is None and 0 <= position < len(positional):
            passed = positional[position]
        if passed is not None:
            found += [v for v in passed[1] if v.kind is Kind.TENSOR]
    return found

"""What a summarised write means at one call: whether the call passes the written parameter,
and how the write is described there."""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.model import Value
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

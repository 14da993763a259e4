"""IPL003: an in-place write to a leaf tensor that requires grad, with grad mode on."""

from __future__ import annotations

from collections.abc import Iterator

from inplace_lint.checks.base import LineOf, RawFinding, Rule
from inplace_lint.facts.events import Facts


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in facts.leaf_writes:
        write = event.write
        if id(write.node) in seen:
            continue
        seen.add(id(write.node))
        raises = (
            "torch raises 'functions with out=... arguments don't support automatic "
            "differentiation'"
            if "out=)" in write.what
            else "torch raises 'a leaf Variable that requires grad is being used in an "
            "in-place operation'"
        )
        message = (
            f"{write.what} writes in place to `{event.leaf}`, a leaf that requires grad, outside "
            f"torch.no_grad(); {raises}"
        )
        yield RawFinding("IPL003", write.node, write.stmt, message, write.related)
    yield from _leaf_passed(facts, seen)


def _leaf_passed(facts: Facts, seen: set[int]) -> Iterator[RawFinding]:
    """A helper writes in place to its parameter, and a caller in this file passes a leaf
    that requires grad there (``create_sinusoidal_embeddings(out=emb.weight)``): torch
    raises at the call. Reported on the helper's write, with the call as related."""
    for event in facts.leaf_arg_writes:
        write = event.write
        if write.via_call is None or id(write.node) in seen:
            continue
        seen.add(id(write.node))
        message = (
            f"{write.what} writes argument `{write.param}` in place; the caller passes "
            f"`{event.leaf}` (line ",
            LineOf(write.via_call),
            "), a leaf that requires grad (or a view of one), outside torch.no_grad(): torch "
            "raises 'a leaf Variable that requires grad is being used in an in-place operation'",
        )
        related = ((write.via_call, f"called with `{event.leaf}` here"),)
        yield RawFinding("IPL003", write.node, write.stmt, message, related)


RULE = Rule(
    code="IPL003",
    name="leaf-inplace",
    summary="in-place write to a leaf tensor that requires grad outside no_grad",
    check=check,
    evidence=("leaf-error",),
    fix="grad-mode",
)

"""IPL003: an in-place write to a leaf tensor that requires grad, with grad mode on."""

from __future__ import annotations

from collections.abc import Iterator

from inplace_lint.checks.base import RawFinding, Rule
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


RULE = Rule(
    code="IPL003",
    name="leaf-inplace",
    summary="in-place write to a leaf tensor that requires grad outside no_grad",
    check=check,
    evidence=("leaf-error",),
    fix="grad-mode",
)

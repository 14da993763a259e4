"""IPL002: a tensor's old value is read again after an in-place write changed it."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from inplace_lint.checks.base import LineOf, RawFinding, Rule
from inplace_lint.facts.events import Facts
from inplace_lint.facts.model import Write


def check(facts: Facts) -> Iterator[RawFinding]:
    seen: set[int] = set()
    for event in facts.stale_reads:
        write = event.write
        if write.via_call is not None or id(write.node) in seen or _nudge(write):
            continue
        seen.add(id(write.node))
        if write.target:
            target = f"`{write.name or write.target}`"
        else:  # an optimizer step names no tensor: it writes the parameters it holds
            target = "the parameters it holds" if write.update else "a tensor"
        if event.overlap:
            source = (
                f"`{event.name}` into part of itself: the source"
                if event.name == write.target
                else f"`{event.name}`, a view of the same tensor that"
            )
            message = (
                f"{write.what} copies {source} overlaps the "
                f"elements it writes: some are overwritten before they are read (torch may "
                "raise 'some elements of the input tensor and the written-to tensor refer to a "
                "single memory location'); clone() the source first",
            )
            related = write.related
        elif event.stored:
            message = (
                f"{write.what} changes {target} in place after it was stored in `{event.name}` "
                "(line ",
                LineOf(event.read),
                f"); later reads of `{event.name}` see the changed value",
            )
            related = ((event.read, f"stored in `{event.name}` here"), *write.related)
        else:
            message = (
                f"{write.what} changes {target} in place, but `{event.name}` reads its old "
                "value again at line ",
                LineOf(event.read),
                f" ({_chained(write, event.read, event.name) or event.how})",
            )
            related = ((event.read, f"`{event.name}` read again here"), *write.related)
        yield RawFinding("IPL002", write.node, write.stmt, message, related)


def _chained(write: Write, read: cst.CSTNode, read_name: str) -> str | None:
    """``x.mul_(a).add_(x[i])``: the read sits in a call chained on the in-place result, which
    the chain treats as a new tensor; say so (nothing was bound to a name)."""
    if write.stmt is None or not isinstance(write.node, cst.Call) or read_name != write.name:
        return None
    finder = _CallFinder()
    write.stmt.visit(finder)
    chain = [write.node]  # the write, then each call made on the previous one's result
    while True:
        receiver = chain[-1]
        following = [c for c in finder.calls if _method_of(c, receiver) is not None]
        if not following:
            break
        chain.append(following[0])
    if len(chain) == 1 or not _contains(chain[-1], read) or _contains(write.node, read):
        return None
    method = _method_of(chain[1], write.node)
    return f"`.{method}()` is chained on the in-place result as if it were a new tensor"


def _method_of(call: cst.Call, receiver: cst.CSTNode) -> str | None:
    """``m`` when ``call`` is ``receiver.m(...)``."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.value is receiver:
        return func.attr.value
    return None


class _CallFinder(cst.CSTVisitor):
    """Every call in a statement."""

    def __init__(self) -> None:
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether ``node`` is ``tree`` or one of its descendants (by identity)."""
    if tree is node:
        return True
    return any(_contains(child, node) for child in tree.children)


#: Largest constant that counts as a numerical nudge rather than a change of value.
NUDGE = 1e-4


def _nudge(write: Write) -> bool:
    """``edges[..., -1] += 1e-6``: an epsilon for numerical safety; a read of the value from
    before it differs by no more than rounding does, so it is not a stale read."""
    small = write.small_statement()
    if not isinstance(small, cst.AugAssign):
        return False
    if not isinstance(small.operator, cst.AddAssign | cst.SubtractAssign):
        return False
    value = small.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    if not isinstance(value, cst.Float):
        return False
    try:
        return 0.0 < float(value.value) <= NUDGE
    except ValueError:
        return False


RULE = Rule(
    code="IPL002",
    name="stale-read",
    summary="in-place write to a tensor whose old value is read again later",
    check=check,
    supersedes=("IPL004",),
    evidence=("stale-twin",),
    fix="out-of-place",
)

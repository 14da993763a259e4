"""Branches a loop takes at most once: ``if step == steps - 1:`` inside ``for step in
range(steps)``. A ``range`` counter never repeats, so a test of it for equality with a value
the loop does not change holds in one iteration at most; what that arm did in an earlier
iteration cannot meet what the same arm does in a later one (deeprobust's C&W attack aliases
its bound only on the last binary-search step, and reads the bound on that arm).

Limits: only ``counter == expr`` / ``expr == counter`` with one comparison (or such a test
joined to others by ``and``); ``expr`` may not call anything or mention a name the loop body
binds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import libcst as cst

from inplace_lint.facts.syntax import binding_target
from inplace_lint.facts.walk import walk


def loop_bound_names(body: Sequence[cst.CSTNode]) -> frozenset[str]:
    """Every name a loop body binds (assignments, loop targets, ``with ... as``)."""
    found: set[str] = set()
    for statement in body:
        for node in walk(statement):
            target = binding_target(node)
            for sub in walk(target) if target is not None else ():
                if isinstance(sub, cst.Name):
                    found.add(sub.value)
    return frozenset(found)


def last_iteration(
    test: cst.BaseExpression, loop: cst.For, code: Callable[[cst.CSTNode], str]
) -> bool:
    """``test`` (or one operand of its ``and``) is ``counter == stop - 1`` for the loop
    ``for counter in range([start, ]stop)``: it holds in the loop's last iteration only."""
    call, target = loop.iter, loop.target
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
        return False
    if call.func.value != "range" or not 1 <= len(call.args) <= 2:
        return False
    if not isinstance(target, cst.Name):
        return False
    stop = "".join(code(call.args[-1].value).split()) + "-1"
    return any(
        counter.value == target.value and "".join(code(other).split()) == stop
        for counter, other in _counter_equalities(test)
    )


def at_most_once(test: cst.BaseExpression, counters: frozenset[str], bound: frozenset[str]) -> bool:
    """``test`` compares a counter of the loop with a value fixed while it runs (alone or as
    one operand of ``and``)."""
    return any(
        counter.value in counters and _fixed(other, bound)
        for counter, other in _counter_equalities(test)
    )


def _counter_equalities(
    test: cst.BaseExpression,
) -> Iterator[tuple[cst.Name, cst.BaseExpression]]:
    """(name, other side) of each ``name == other`` or ``other == name`` that ``test`` is, or
    that is an operand of its ``and``s: the candidates for a counter test."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from _counter_equalities(test.left)
        yield from _counter_equalities(test.right)
        return
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return
    if not isinstance(test.comparisons[0].operator, cst.Equal):
        return
    left, right = test.left, test.comparisons[0].comparator
    for counter, other in ((left, right), (right, left)):
        if isinstance(counter, cst.Name):
            yield counter, other


def _fixed(expr: cst.BaseExpression, bound: frozenset[str]) -> bool:
    for node in walk(expr):
        if isinstance(node, cst.Call):
            return False
        if isinstance(node, cst.Name) and node.value in bound:
            return False
    return True

"""The tests a summarised write sits under, and whether a call lets it happen.

``if inplace:`` / ``if not inplace:`` on a parameter (a flag the call sets), ``if mask is not
None:`` (the call may pass a value), and ``if not self.inplace:`` (an owner's opt-in mode,
which a call cannot see). Split from ``summaries.py``, which records the guards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from inplace_lint.facts.classes import literal_bool
from inplace_lint.facts.conditions import _negated
from inplace_lint.facts.heuristics import _mentions_inplace
from inplace_lint.facts.model import Value
from inplace_lint.facts.syntax import is_none
from inplace_lint.facts.walk import walk

if TYPE_CHECKING:
    from inplace_lint.facts.summaries import Mutation


def opted_out(test: cst.BaseExpression) -> bool:
    """``not self.inplace``: a test that holds when an object's ``inplace`` flag is off."""
    inner = _negated(test)
    return isinstance(inner, cst.Attribute) and _mentions_inplace(inner)


def mark_guarded(
    node: cst.CSTNode, guard: tuple[str, bool, bool], guarded: dict[int, tuple[str, bool, bool]]
) -> None:
    """Every node under ``node`` sits under ``guard`` (the first test to mark it counts)."""
    for inner in walk(node):
        guarded.setdefault(id(inner), guard)


def guard_holds(
    keywords: dict[str, tuple[cst.Arg, list[Value]]],
    positional: list[tuple[cst.Arg, list[Value]]],
    mutation: Mutation,
) -> bool:
    """The call gives the mutation's guard parameter the value its write needs: a literal
    bool passed, or the parameter's literal default when none is passed. For a test of
    ``None``, only a ``None`` passed (or a ``None`` default) decides; any other argument may
    be either, so the write may happen."""
    passed = keywords.get(mutation.guard or "")
    if passed is None and 0 <= mutation.guard_index < len(positional):
        passed = positional[mutation.guard_index]
    if mutation.guard_none:
        given_none = is_none(passed[0].value) if passed is not None else mutation.guard_default
        return not given_none or not mutation.guard_value
    value = literal_bool(passed[0].value) if passed is not None else mutation.guard_default
    return value is mutation.guard_value

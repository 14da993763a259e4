"""Tests of instance configuration that every construction in the file settles.

``if self.inplace:`` where ``__init__`` stores a parameter every construction gives ``False``,
or ``if self.inp_merge == "mlp":`` where every construction gives ``"mlp"``: the test has one
outcome in every instance the source shows, so only that arm runs (and when it ends in
``return``, nothing after the ``if`` does). Limits: the attribute must be stored once in the
whole file (``attribute_stores``), from an ``__init__`` parameter; only plain bools, and
``==``/``!=``/``in``/``not in`` against string literals (or a tuple or list of them), and
``and``/``or`` of such tests.
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from inplace_lint.facts.classes import ClassFacts, literal_bool
from inplace_lint.facts.conditions import _negated
from inplace_lint.facts.constructed import string_literal


def constant_test(
    test: cst.BaseExpression, cls: ClassFacts | None, stores: Counter[str]
) -> bool | None:
    """The outcome ``test`` has in every instance of ``cls`` built in the file, else None."""
    if cls is None:
        return None
    inner = _negated(test)
    negated = inner is not None
    inner = inner if inner is not None else test
    if isinstance(inner, cst.BooleanOperation):
        outcome = _combined(inner, cls, stores)
    elif isinstance(inner, cst.Comparison):
        outcome = _compared(inner, cls, stores)
    else:
        given = _given(inner, cls, stores)
        flags = {literal_bool(e) for e in given} if given else {None}
        outcome = flags.pop() if len(flags) == 1 else None
    return None if outcome is None else outcome is not negated


def _combined(test: cst.BooleanOperation, cls: ClassFacts, stores: Counter[str]) -> bool | None:
    """``a and b`` / ``a or b``: settled where both sides are, or one side decides alone."""
    left = constant_test(test.left, cls, stores)
    right = constant_test(test.right, cls, stores)
    deciding = isinstance(test.operator, cst.Or)  # the outcome of one side that decides
    if deciding in (left, right):
        return deciding
    if left is None or right is None:
        return None
    return not deciding


def _given(
    expr: cst.BaseExpression, cls: ClassFacts, stores: Counter[str]
) -> tuple[cst.BaseExpression, ...]:
    """What every construction gives the ``__init__`` parameter stored once on ``self.attr``
    (``expr``), or () where that is not known."""
    if not (
        isinstance(expr, cst.Attribute)
        and isinstance(expr.value, cst.Name)
        and expr.value.value == "self"
    ):
        return ()
    attr = expr.attr.value
    return cls.constants.get(attr, ()) if stores[attr] == 1 else ()


def _compared(test: cst.Comparison, cls: ClassFacts, stores: Counter[str]) -> bool | None:
    """``self.attr == "mlp"`` (or ``!=``, ``in``, ``not in`` a display of strings) where every
    construction gives ``attr`` the same string literal: the comparison's outcome."""
    if len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    left, right = test.left, target.comparator
    if _given(right, cls, stores) and not _given(left, cls, stores):
        left, right = right, left  # ``"mlp" == self.inp_merge``
    values = {string_literal(e) for e in _given(left, cls, stores)}
    if len(values) != 1 or None in values:
        return None
    value = values.pop()
    operator = target.operator
    if isinstance(operator, cst.Equal | cst.NotEqual):
        other = string_literal(right)
        if other is None:
            return None
        return (value == other) is isinstance(operator, cst.Equal)
    if isinstance(operator, cst.In | cst.NotIn) and isinstance(
        right, cst.Tuple | cst.List | cst.Set
    ):
        options = [string_literal(e.value) for e in right.elements]
        if None in options:
            return None
        return (value in options) is isinstance(operator, cst.In)
    return None

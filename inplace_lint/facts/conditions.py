"""Branch conditions the binder can match: the same test on the same names, seen again.

``t = x.clone() if needs_grad else x`` and, later, ``if needs_grad: t.mul_(2)``: under the
second test the first test held too, so ``t`` is the clone there, never ``x``. A condition
is matched only when it is a plain name or attribute (``needs_grad``, ``self.training``),
``X is None`` / ``X is not None``, or ``X == literal`` / ``X != literal`` (a string or number:
``self.loss == "modified_huber"``), possibly under ``not``, and the names it reads have not
been bound again in between (the key holds their binding sequence numbers). Anything else
(calls, other comparisons, ``and``/``or``) is not matched: the arms stay independent.

``grad_off_arms`` reads another kind of test: one on torch's grad mode, whose arms then run
with grad on or off like the body of ``with torch.no_grad():``; ``plain_arms`` one on a
tensor's ``requires_grad``, which says the tensor needs no grad in an arm (and after the
``if``, when the other arm returns).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.syntax import none_comparison

#: what a condition tests, with the binding sequence numbers of the names it reads
Key = tuple[str, tuple[int, ...]]


def condition_key(test: cst.BaseExpression, bindings: dict[str, int]) -> tuple[Key, bool] | None:
    """The key of ``test`` and whether it holds when ``test`` is true, or None."""
    polarity = True
    while (inner := _negated(test)) is not None:
        test, polarity = inner, not polarity
    subject: cst.BaseExpression = test
    text: str | None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        right = target.comparator
        if isinstance(right, cst.Name) and right.value == "None":
            compared, equal, unequal = "is None", cst.Is, cst.IsNot
        else:
            literal = _literal(right)
            if literal is None:
                return None
            compared, equal, unequal = f"== {literal}", cst.Equal, cst.NotEqual
        if isinstance(target.operator, unequal):
            polarity = not polarity
        elif not isinstance(target.operator, equal):
            return None
        subject = test.left
        text = dotted_name(subject)
        text = f"{text} {compared}" if text is not None else None
    else:
        text = dotted_name(test)
    if text is None or text in ("True", "False", "None"):
        return None
    name = dotted_name(subject) or ""
    seqs = tuple(bindings.get(part, 0) for part in _prefixes(name))
    return (text, seqs), polarity


def _literal(node: cst.BaseExpression) -> str | None:
    """The value of a string or number literal, as a key (``"a"`` and ``'a'`` are one)."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return repr(value) if isinstance(value, str) else None
    if isinstance(node, cst.Integer | cst.Float):
        return repr(node.evaluated_value)
    return None


def _prefixes(dotted: str) -> list[str]:
    """``self.a.b`` -> ``self``, ``self.a``, ``self.a.b``: any of them bound again breaks the
    match."""
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


#: tests that say grad mode is on, and tests that say it is off
_GRAD_ON = frozenset({"torch.is_grad_enabled"})
_GRAD_OFF = frozenset({"torch.is_inference_mode_enabled"})


def grad_off_arms(
    test: cst.BaseExpression, qualify: Callable[[cst.BaseExpression], str | None]
) -> tuple[bool, bool]:
    """Whether the body and the ``else`` of ``if test:`` run with grad off, by the test:
    ``if not torch.is_grad_enabled() and ...:`` (or ``torch.is_inference_mode_enabled()``)
    runs its body so, ``if torch.is_grad_enabled():`` its ``else``. Other tests say nothing."""
    if _calls(test, qualify, _GRAD_ON):
        return (False, True)
    for part in _parts(test, cst.And):  # ``a and not torch.is_grad_enabled() and b``
        negated = _negated(part)
        if negated is not None and _calls(negated, qualify, _GRAD_ON):
            return (True, False)
        if _calls(part, qualify, _GRAD_OFF):
            return (True, False)
    return (False, False)


def _calls(
    node: cst.BaseExpression,
    qualify: Callable[[cst.BaseExpression], str | None],
    names: frozenset[str],
) -> bool:
    return isinstance(node, cst.Call) and not node.args and qualify(node.func) in names


def plain_arms(test: cst.BaseExpression) -> tuple[frozenset[str], frozenset[str]]:
    """The names whose tensors need no grad in the body and in the ``else`` of ``if test:``,
    by the test: ``if not x.requires_grad:`` (alone or as a part of an ``and``) says so of
    ``x`` in the body, ``if x.requires_grad:`` (or ``or``-ed tests on it) in the ``else``.
    ``x.grad_fn is not None`` reads as ``x.requires_grad`` (a tensor computed here has a
    ``grad_fn`` exactly when it needs grad), ``x.grad_fn is None`` as its negation."""
    negated = _negated(test)
    # ``a.requires_grad or b.requires_grad`` is false only when neither needs grad
    either = _requires_grad_names(_parts(test if negated is None else negated, cst.Or))
    if negated is not None:
        return (either, frozenset())
    inside = [inner for part in _parts(test, cst.And) if (inner := _negated(part)) is not None]
    plain = _requires_grad_names(inside) | {
        name for part in _parts(test, cst.And) if (name := _grad_fn_of(part, True)) is not None
    }
    return (plain, either)


def _requires_grad_names(parts: list[cst.BaseExpression]) -> frozenset[str]:
    """The names ``x`` of the parts that read ``x.requires_grad``."""
    return frozenset(name for part in parts if (name := _requires_grad_of(part)) is not None)


def _negated(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` of ``not x``, else None."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return test.expression
    return None


def _parts(test: cst.BaseExpression, operator: type) -> list[cst.BaseExpression]:
    parts, pending = [], [test]
    while pending:
        part = pending.pop()
        if isinstance(part, cst.BooleanOperation) and isinstance(part.operator, operator):
            pending += [part.left, part.right]
        else:
            parts.append(part)
    return parts


def _requires_grad_of(node: cst.BaseExpression) -> str | None:
    """``x.requires_grad`` or ``x.grad_fn is not None`` (``x`` a name): ``x``."""
    if isinstance(node, cst.Attribute) and node.attr.value == "requires_grad":
        return dotted_name(node.value) if isinstance(node.value, cst.Name) else None
    return _grad_fn_of(node, False)


def _grad_fn_of(node: cst.BaseExpression, is_none: bool) -> str | None:
    """``x`` of ``x.grad_fn is None`` (``is_none``) or ``x.grad_fn is not None``."""
    compared = none_comparison(node)
    if compared is None or compared[1] != is_none:
        return None
    left = compared[0]
    if isinstance(left, cst.Attribute) and left.attr.value == "grad_fn":
        return left.value.value if isinstance(left.value, cst.Name) else None
    return None

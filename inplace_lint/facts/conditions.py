"""Branch conditions the binder can match: the same test on the same names, seen again.

``t = x.clone() if needs_grad else x`` and, later, ``if needs_grad: t.mul_(2)``: under the
second test the first test held too, so ``t`` is the clone there, never ``x``. A condition
is matched only when it is a plain name or attribute (``needs_grad``, ``self.training``), or
``X is None`` / ``X is not None``, possibly under ``not``, and the names it reads have not
been bound again in between (the key holds their binding sequence numbers). Anything else
(calls, comparisons of values, ``and``/``or``) is not matched: the arms stay independent.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.names import dotted_name

#: what a condition tests, with the binding sequence numbers of the names it reads
Key = tuple[str, tuple[int, ...]]


def condition_key(test: cst.BaseExpression, bindings: dict[str, int]) -> tuple[Key, bool] | None:
    """The key of ``test`` and whether it holds when ``test`` is true, or None."""
    polarity = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, polarity = test.expression, not polarity
    subject: cst.BaseExpression = test
    text: str | None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        right = target.comparator
        if not (isinstance(right, cst.Name) and right.value == "None"):
            return None
        if isinstance(target.operator, cst.IsNot):
            polarity = not polarity
        elif not isinstance(target.operator, cst.Is):
            return None
        subject = test.left
        text = dotted_name(subject)
        text = f"{text} is None" if text is not None else None
    else:
        text = dotted_name(test)
    if text is None or text in ("True", "False", "None"):
        return None
    name = dotted_name(subject) or ""
    seqs = tuple(bindings.get(part, 0) for part in _prefixes(name))
    return (text, seqs), polarity


def _prefixes(dotted: str) -> list[str]:
    """``self.a.b`` -> ``self``, ``self.a``, ``self.a.b``: any of them bound again breaks the
    match."""
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]

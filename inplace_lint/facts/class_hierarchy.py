"""Class hierarchy facts for inlining calls: a class's same-file subclasses, and methods
left to them (``abstract``)."""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.classes import ClassFacts


def subclasses(classes: dict[str, ClassFacts], name: str) -> list[ClassFacts]:
    """The same-file classes derived from class ``name``, directly or not."""
    found: list[ClassFacts] = []
    frontier = {name}
    while frontier:
        derived = [c for c in classes.values() if frontier & set(c.bases) and c not in found]
        found.extend(derived)
        frontier = {c.name for c in derived}
    return found


def abstract(func: cst.FunctionDef) -> bool:
    """A method left to subclasses: its body only raises ``NotImplementedError`` (or is
    ``...`` / ``pass``), after an optional docstring."""
    body = list(func.body.body)
    if (
        body
        and isinstance(body[0], cst.SimpleStatementLine)
        and isinstance(body[0].body[0], cst.Expr)
        and isinstance(body[0].body[0].value, cst.SimpleString | cst.ConcatenatedString)
    ):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine):
        return False
    small = body[0].body[0]
    if isinstance(small, cst.Pass) or (
        isinstance(small, cst.Expr) and isinstance(small.value, cst.Ellipsis)
    ):
        return True
    if not isinstance(small, cst.Raise) or small.exc is None:
        return False
    raised = small.exc.func if isinstance(small.exc, cst.Call) else small.exc
    return isinstance(raised, cst.Name) and raised.value == "NotImplementedError"

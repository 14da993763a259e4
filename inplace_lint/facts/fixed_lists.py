"""Lists a function builds once, as a literal, and never changes: what ``*name`` unpacks.

``layers = [nn.Linear(a, b), nn.ReLU(), nn.Dropout(p, inplace=True)]`` followed by
``nn.Sequential(*layers)`` builds the same chain as listing the modules in the call. A name
counts only when the function binds it exactly once, to a list or tuple display without
starred items, and never changes it (no method call on it, no item assignment or ``del``,
no augmented assignment): then every ``*name`` in that function unpacks exactly those items.
A list passed to another function that changes it is not seen; that is the limit.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.syntax import bound_names
from inplace_lint.facts.walk import own_nodes


def fixed_lists(func: cst.FunctionDef) -> dict[str, tuple[cst.BaseExpression, ...]]:
    """Names ``func`` binds once to a literal list or tuple it never changes, with the items.

    Nested functions and classes are not looked into for bindings; a change made in one
    (a method call on the name) still disqualifies the name, since ``own_nodes`` is not
    enough to rule it out there."""
    counts = bound_names(func)[0]
    found: dict[str, tuple[cst.BaseExpression, ...]] = {}
    for node in own_nodes(func):
        if not isinstance(node, cst.Assign) or not isinstance(node.value, cst.List | cst.Tuple):
            continue
        items = node.value.elements
        for target in node.targets:
            name = target.target
            if (
                isinstance(name, cst.Name)
                and counts.get(name.value) == 1
                and all(isinstance(e, cst.Element) for e in items)
            ):
                found[name.value] = tuple(e.value for e in items)
    if not found:
        return found
    changed: set[str] = set()

    class _Changes(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            target = node.func
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
                changed.add(target.value.value)

        def visit_Subscript(self, node: cst.Subscript) -> None:
            # ``layers[0] = m`` or ``del layers[0]``: reads are harmless but rare enough
            # next to a fixed list that any subscript disqualifies the name
            if isinstance(node.value, cst.Name):
                changed.add(node.value.value)

    func.body.visit(_Changes())
    return {name: items for name, items in found.items() if name not in changed}

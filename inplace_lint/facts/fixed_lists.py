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
from inplace_lint.facts.walk import own_nodes, walk


def fixed_lists(
    func: cst.FunctionDef, counts: dict[str, int] | None = None
) -> dict[str, tuple[cst.BaseExpression, ...]]:
    """Names ``func`` binds once to a literal list or tuple it never changes, with the items.

    Nested functions and classes are not looked into for bindings; a change made in one
    (a method call on the name) still disqualifies the name, since ``own_nodes`` is not
    enough to rule it out there."""
    if counts is None:  # how often each name is bound (``bound_names``), if not given
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
    for node in walk(func.body):
        # a method call on the name (``layers.pop(2)``), or any subscript of it
        # (``layers[0] = m``, ``del layers[0]``; reads are harmless but rare enough beside a
        # fixed list that any subscript disqualifies the name)
        if type(node) is cst.Call and isinstance(node.func, cst.Attribute):
            holder = node.func.value
        elif type(node) is cst.Subscript:
            holder = node.value
        else:
            continue
        if isinstance(holder, cst.Name):
            changed.add(holder.value)
    return {name: items for name, items in found.items() if name not in changed}

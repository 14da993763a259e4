"""Which same-file ``autograd.Function`` subclasses return views from their ``forward``.

torch refuses an in-place write to a custom Function's output that is a view (made by a view
op inside ``forward``, or an input returned as it came): 'Output 0 of F is a view and is being
modified inplace. This view was created inside a custom Function (or because an input was
returned as-is)', whenever grad is on and the output requires grad. Probed with torch 2.13:
``x.clone().t()``, ``x.view(-1)`` and ``x`` itself are refused, ``x * 2`` is not.

The answer is read from the source of ``forward`` alone: a ``return`` whose value (or a tuple
element of it) is a parameter, a view-method chain (``x.view(...)``, ``x2.transpose(1, 2)``,
``x[:, 0]`` with basic indexing), or a name bound once in ``forward`` to such a chain.
Limits: views made in helpers, names bound several times, and ``mark_dirty`` outputs (which
are inputs written in place, not views) are not followed; a forward that calls
``ctx.mark_dirty`` is left alone.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.walk import own_nodes

#: the marker a value returned by such a Function carries in ``Value.multi_view``
FUNCTION_VIEW_PREFIX = "Function "


def returns_view(forward: cst.FunctionDef, view_methods: frozenset[str]) -> bool:
    """Whether some ``return`` of ``forward`` gives a view (see the module docstring)."""
    params = {p.name.value for p in forward.params.params[1:]}  # not ``ctx``
    bound: dict[str, list[cst.BaseExpression]] = {}
    returns: list[cst.BaseExpression] = []
    for node in own_nodes(forward):
        if isinstance(node, cst.Call) and _is_mark_dirty(node):
            return False
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Name):
                bound.setdefault(target.value, []).append(node.value)
        elif isinstance(node, cst.AugAssign | cst.AnnAssign) and isinstance(node.target, cst.Name):
            bound.setdefault(node.target.value, []).append(cst.Name("_"))  # bound again
        elif isinstance(node, cst.Return) and isinstance(node.value, cst.Tuple):
            returns.extend(e.value for e in node.value.elements)
        elif isinstance(node, cst.Return) and node.value is not None:
            returns.append(node.value)
    return any(_is_view(value, params, bound, view_methods) for value in returns)


def _is_view(
    value: cst.BaseExpression,
    params: set[str],
    bound: dict[str, list[cst.BaseExpression]],
    view_methods: frozenset[str],
) -> bool:
    if isinstance(value, cst.Name):
        if value.value in params and value.value not in bound:
            return True  # an input returned as it came
        sources = bound.get(value.value, [])
        return len(sources) == 1 and _view_chain(sources[0], view_methods)
    return _view_chain(value, view_methods)


def _view_chain(value: cst.BaseExpression, view_methods: frozenset[str]) -> bool:
    """``base.view(...).transpose(...)`` or ``base[:, 0]``: the outermost step makes a view."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        return value.func.attr.value in view_methods
    if isinstance(value, cst.Subscript):
        return all(_basic(element.slice) for element in value.slice)
    return False


def _basic(index: cst.BaseSlice) -> bool:
    """A slice or an integer constant: basic indexing, which makes a view."""
    if isinstance(index, cst.Slice):
        return True
    return isinstance(index, cst.Index) and isinstance(index.value, cst.Integer | cst.Ellipsis)


def _is_mark_dirty(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "mark_dirty"

"""Parameters a function's own body shows to be lists, dicts or numpy arrays, not tensors.

``def forward(self, x, feat_cache=None, feat_idx=None)`` looks like a module taking three
tensors, but ``feat_cache[idx] = "Rep"``, ``feat_cache[idx] is None`` and ``feat_idx = [0]``
say otherwise: a tensor element is never a string or None. ``key not in cache`` says the same
of ``cache``.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.walk import own_nodes, walk

#: Methods that lists, dicts and sets have and tensors do not.
CONTAINER_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "items", "keys", "values", "get", "setdefault", "update"}
)
_COLLECTIONS = cst.List | cst.Dict | cst.Set | cst.ListComp | cst.DictComp | cst.SetComp


def container_params(func: cst.FunctionDef) -> frozenset[str]:
    """Names of ``func``'s parameters that its body uses as a list, dict, set or numpy array."""
    params = {p.name.value for p in (*func.params.posonly_params, *func.params.params)}
    params |= {p.name.value for p in func.params.kwonly_params}
    found: set[str] = set()
    for node in own_nodes(func):
        kind = type(node)
        if kind is cst.Assign:
            for target in node.targets:
                found |= _container_target(target.target, node.value, params)
        elif kind is cst.Comparison:
            found |= _none_checked_element(node, params) | _membership_tested(node, params)
        elif kind is cst.AugAssign and isinstance(node.value, cst.List | cst.ListComp):
            target = node.target  # ``att_prev_list += [w]``: a list grown, not a tensor
            if isinstance(target, cst.Name) and target.value in params:
                found.add(target.value)
        elif kind is cst.Call and type(node.func) is cst.Attribute:
            owner = node.func.value
            if (
                isinstance(owner, cst.Name)
                and owner.value in params
                and node.func.attr.value in CONTAINER_METHODS
            ):
                found.add(owner.value)
            elif _numpy_call(node):  # ``np.copy(inputs)``: a numpy array, not a tensor
                found |= {
                    a.value.value
                    for a in node.args
                    if isinstance(a.value, cst.Name) and a.value.value in params
                }
    return frozenset(found)


def _numpy_call(node: cst.Call) -> bool:
    root = node.func
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and root.value in ("np", "numpy")


def _container_target(
    target: cst.BaseExpression, value: cst.BaseExpression, params: set[str]
) -> set[str]:
    # ``feat_idx = [0]``: rebound to a list where none was passed; not ``feats = {"0":
    # feats[..., None]}``, which wraps the tensor passed (equiformer)
    if (
        isinstance(target, cst.Name)
        and target.value in params
        and isinstance(value, _COLLECTIONS)
        and not any(isinstance(n, cst.Name) and n.value == target.value for n in walk(value))
    ):
        return {target.value}
    if (
        isinstance(target, cst.Subscript)
        and isinstance(target.value, cst.Name)
        and target.value.value in params
        and _not_a_tensor_element(value)
    ):
        return {target.value.value}
    return set()


def _not_a_tensor_element(value: cst.BaseExpression) -> bool:
    """A value no tensor element can hold: a string, None, or a collection."""
    if isinstance(value, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
        return True
    if isinstance(value, cst.Name) and value.value == "None":
        return True
    return isinstance(value, _COLLECTIONS)


def _membership_tested(node: cst.Comparison, params: set[str]) -> set[str]:
    """``key not in cache``: a parameter asked whether it holds a key or an item (a number
    literal asked of it, ``-1 in labels``, may be asked of a tensor and says nothing)."""
    found: set[str] = set()
    left = node.left
    for target in node.comparisons:
        comparator = target.comparator
        if (
            isinstance(target.operator, cst.In | cst.NotIn)
            and isinstance(comparator, cst.Name)
            and comparator.value in params
            and not isinstance(left, cst.Integer | cst.Float | cst.UnaryOperation)
        ):
            found.add(comparator.value)
        left = comparator
    return found


def _none_checked_element(node: cst.Comparison, params: set[str]) -> set[str]:
    """``p[i] is None``: a tensor's elements are never None."""
    left = node.left
    if not (
        isinstance(left, cst.Subscript)
        and isinstance(left.value, cst.Name)
        and left.value.value in params
    ):
        return set()
    for target in node.comparisons:
        if (
            isinstance(target.operator, cst.Is | cst.IsNot)
            and isinstance(target.comparator, cst.Name)
            and target.comparator.value == "None"
        ):
            return {left.value.value}
    return set()

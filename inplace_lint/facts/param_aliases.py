"""Which parameter a local name shares storage with, read from the expression bound to it
(for the argument-write summaries): the parameter itself, a view of it by a view method or
function of the generated op table, a basic index, or a comprehension over its views.
Limits: a view function is known by its dotted name as written (``torch.narrow``), not
through an import alias.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.ops import OpTable
from inplace_lint.facts.syntax import basic_index, none_comparison
from inplace_lint.facts.walk import own_nodes


def aliased_param(
    node: cst.BaseExpression, table: OpTable, passes: Mapping[str, frozenset[int]] | None = None
) -> str | None:
    """The name ``node`` shares storage with: ``r`` for ``r``, ``r.view(-1)``, ``r[:, 0]``,
    ``r.split(1, -1)`` and ``torch.narrow(r, ...)`` (its views); ``[v.squeeze(-1) for v in
    r.split(1, -1)]`` too; ``passes``: same-file functions that may hand back the argument at
    these positions (``hands_back``), so ``_ensure_full_tensor(r)`` may be ``r``."""
    if isinstance(node, cst.ListComp | cst.GeneratorExp):
        return _comprehension_alias(node, table)
    if isinstance(node, cst.IfExp):  # ``x.unsqueeze(0) if x.dim() == 2 else x``: both arms
        body = aliased_param(node.body, table, passes)
        orelse = aliased_param(node.orelse, table, passes)
        if body is not None and body == orelse:
            return body
        # ``embed(tokens) if inputs_embeds is None else inputs_embeds``: the parameter on the
        # arm where it holds something, and nothing to write on the other
        tested = none_comparison(node.test)
        if tested is not None and isinstance(tested[0], cst.Name):
            name, is_none_test = tested[0].value, tested[1]
            if (name, not is_none_test) in ((body, True), (orelse, False)):
                return name
        return None
    while True:
        if isinstance(node, cst.Call) and dotted_name(node.func) in table.view_functions:
            if not node.args or node.args[0].keyword is not None:
                return None
            node = node.args[0].value  # ``torch.tensor_split(r, [1, 3])``: views of ``r``
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value not in table.view_methods:
                return None
            node = node.func.value
        elif isinstance(node, cst.Subscript) and basic_index(node):
            node = node.value
        elif (passed := _passed_back(node, passes)) is not None:
            node = passed
        else:
            break
    return node.value if isinstance(node, cst.Name) else None


def _passed_back(
    node: cst.BaseExpression, passes: Mapping[str, frozenset[int]] | None
) -> cst.BaseExpression | None:
    """The argument a call of a same-file function may hand back (one position, passed by
    position), or None."""
    if not passes or not isinstance(node, cst.Call) or not isinstance(node.func, cst.Name):
        return None
    positions = passes.get(node.func.value, frozenset())
    if len(positions) != 1 or any(a.star for a in node.args):
        return None
    (position,) = positions
    plain = [a for a in node.args if a.keyword is None]
    return plain[position].value if position < len(plain) else None


def _comprehension_alias(node: cst.ListComp | cst.GeneratorExp, table: OpTable) -> str | None:
    """``[v.squeeze(-1) for v in r.split(1, -1)]``: each element a view of ``r``."""
    loop = node.for_in
    if loop.inner_for_in is not None or loop.ifs or not isinstance(loop.target, cst.Name):
        return None
    if aliased_param(node.elt, table) != loop.target.value:
        return None
    return aliased_param(loop.iter, table)


def data_root(node: cst.BaseExpression) -> str | None:
    """The leftmost name of a method chain: ``x`` for ``x.masked_fill(m, 0).softmax(-1)``."""
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Subscript | cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            return None


def returns(func: cst.FunctionDef) -> tuple[bool, frozenset[str]]:
    """Whether ``func`` returns a value, and the names its return values are rooted at."""
    gives = False
    roots: set[str] = set()
    for node in own_nodes(func):
        if type(node) is not cst.Return or node.value is None:
            continue
        if isinstance(node.value, cst.Name) and node.value.value == "None":
            continue
        gives = True
        values: list[cst.BaseExpression] = [node.value]
        while values:
            value = values.pop()
            if isinstance(value, cst.IfExp):
                values += [value.body, value.orelse]
            elif isinstance(value, cst.Tuple):
                values += [e.value for e in value.elements]
            else:
                name = data_root(value)
                if name is not None:
                    roots.add(name)
    return gives, frozenset(roots)


def hands_back(func: cst.FunctionDef, table: OpTable) -> frozenset[int]:
    """The positions of the parameters ``func`` may return, or a view of
    (``_ensure_full_tensor(tensor)`` returning ``tensor`` on one path): a caller's name bound
    to its result may share storage with what it passed there."""
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    found: set[int] = set()
    for node in own_nodes(func):
        if type(node) is cst.Return and node.value is not None:
            name = aliased_param(node.value, table)
            if name in params:
                found.add(params.index(name))
    return frozenset(found)

"""Reads through which a value filled with minus infinity passes no gradient.

``scores.data.masked_fill_(pad, -inf)`` and then ``softmax(scores)``: softmax's output is
exactly 0 at the filled positions, and so is its gradient there (``y_i (g_i - sum(y g))``
with ``y_i = 0``); ``exp`` and ``sigmoid`` likewise. Hiding such a fill from autograd then
changes no gradient: the positions autograd does not know were replaced get zero from
downstream either way, and every other position sees the same forward values.

A finite fill counts as minus infinity from a magnitude of 1e4, where ``exp`` underflows to
exactly 0 in float32 and float64. Limits: the fill value is read from the write's own call
or statement, a literal, ``torch.finfo(...).min`` or an attribute that ``__init__`` sets from
a parameter every construction in the file leaves at (or passes) such a value; a fill through
a variable of the function is not followed.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

from inplace_lint.facts.model import Write
from inplace_lint.facts.names import ImportTable, dotted_name

#: functions whose gradient at a minus-infinity input is exactly zero
VANISHING_FUNCTIONS = frozenset(
    {
        "torch.softmax",
        "torch.special.softmax",
        "torch.nn.functional.softmax",
        "torch.exp",
        "torch.sigmoid",
        "torch.special.expit",
        "torch.nn.functional.sigmoid",
    }
)
#: the same as tensor methods
VANISHING_METHODS = frozenset({"softmax", "exp", "sigmoid"})
_LARGE = 1e4
_INFINITIES = frozenset({"math.inf", "torch.inf", "numpy.inf", "np.inf"})


def fill_value(write: Write) -> cst.BaseExpression | None:
    """The value a fill writes: ``masked_fill_(m, v)``, ``fill_(v)``, ``x[m] = v``."""
    node = write.node
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method = node.func.attr.value
        position = {"masked_fill_": 1, "fill_": 0}.get(method)
        if position is None:
            return None
        for index, arg in enumerate(node.args):
            if arg.keyword is not None and arg.keyword.value == "value":
                return arg.value
            if arg.keyword is None and not arg.star and index == position:
                return arg.value
        return None
    small = write.small_statement()
    if isinstance(small, cst.Assign) and isinstance(node, cst.Subscript):
        return small.value
    return None


def minus_infinity(
    expr: cst.BaseExpression,
    imports: ImportTable,
    constants: Mapping[str, tuple[cst.BaseExpression, ...]] | None = None,
) -> bool:
    """Whether ``expr`` is minus infinity, or a value whose ``exp`` is exactly zero."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _plus_infinity(expr.expression, imports)
    if isinstance(expr, cst.Call) and _float_of(expr, imports, "-inf"):
        return True
    if isinstance(expr, cst.Attribute) and expr.attr.value == "min" and _finfo(expr.value, imports):
        return True
    name = dotted_name(expr)
    if constants and name is not None and name.startswith("self.") and name.count(".") == 1:
        given = constants.get(name[5:])
        return bool(given) and all(minus_infinity(e, imports) for e in given)
    return False


def _plus_infinity(expr: cst.BaseExpression, imports: ImportTable) -> bool:
    if isinstance(expr, (cst.Float, cst.Integer)):
        return abs(float(expr.evaluated_value)) >= _LARGE
    if isinstance(expr, cst.Call):
        return _float_of(expr, imports, "inf") or _float_of(expr, imports, "infinity")
    if isinstance(expr, cst.Attribute):
        if expr.attr.value == "max" and _finfo(expr.value, imports):
            return True
        return (imports.qualify(expr) or dotted_name(expr) or "") in _INFINITIES
    return False


def _float_of(call: cst.Call, imports: ImportTable, text: str) -> bool:
    """``float("inf")`` (any case) when ``text`` is ``inf``."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "float" and len(call.args) == 1):
        return False
    value = call.args[0].value
    if not isinstance(value, cst.SimpleString):
        return False
    literal = value.evaluated_value
    return isinstance(literal, str) and literal.strip().lower() == text


def _finfo(expr: cst.BaseExpression, imports: ImportTable) -> bool:
    """``torch.finfo(dtype)``."""
    return isinstance(expr, cst.Call) and imports.qualify(expr.func) == "torch.finfo"

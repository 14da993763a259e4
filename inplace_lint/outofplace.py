"""The out-of-place forms of in-place torch writes, shared by the autofix and the twin.

Both rewriters (:mod:`inplace_lint.fix`, which offers edits to the user, and
:mod:`inplace_lint.dynamic.twin`, which the dynamic checker runs) ask this module what the
out-of-place form of an in-place call or statement is, and read calls with the same syntax
helpers. The answers come from the generated op table (:mod:`inplace_lint.facts.ops`):

* which names are in-place (:func:`is_inplace_name`) and which position turns ``inplace`` on
  (:func:`inplace_position`: ``F.relu(x, True)``, ``nn.ReLU(True)``);
* how a method's write is undone (:func:`method_form`): renamed to its stem (``add_`` ->
  ``add``), or, where torch has no stem method, applied to a clone (``x.clone().zero_()``);
* which augmented assignments torch performs in place, and their binary operator
  (:func:`binary_form`: ``x += y`` -> ``x + y``; ``@=`` is never in place on a tensor).

The op knowledge the table cannot give lives here once, each piece with its reason:
:data:`NOT_REWRITTEN`, :data:`_STEM_DIFFERS`, ``copy_`` (:attr:`Form.COPY`) and
:data:`_FUNCTION_RENAMES`. Each rewriter keeps its own policy on top (which forms the autofix
offers and how safe they are; what the twin does with views and containers). This module
never imports torch.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from functools import cache

import libcst as cst

from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.ops import (
    NON_WRITING_METHODS,
    inplace_flag_positions,
    is_inplace_name,
    load_table,
    out_of_place_method,
)

__all__ = [
    "NOT_REWRITTEN",
    "OPERAND_ATOMS",
    "Form",
    "binary_form",
    "dotted_name",
    "function_out_of_place",
    "inplace_position",
    "is_inplace_name",
    "is_self",
    "is_true",
    "keyword",
    "method_chain",
    "method_form",
    "needs_parens",
    "positional",
    "positional_inplace",
]


class Form(Enum):
    """How the out-of-place twin of an in-place method call ``recv.name_(args)`` is spelled."""

    #: ``recv.name(args)``: the stem computes the value the write stores.
    RENAME = "rename"
    #: ``recv.clone().name_(args)``: the exact out-of-place meaning of any write, for methods
    #: whose stem is missing (``zero_``, ``normal_``) or means something else (``bernoulli_``).
    CLONE = "clone"
    #: ``recv.copy_(src)``: ``src`` broadcast to ``recv`` and cast to its dtype, both kept in
    #: the graph (torch has no ``copy`` method, and a clone would cut ``src`` off).
    COPY = "copy"


#: In-place methods that are not value writes, so they have no out-of-place form. The table
#: leaves out methods that change no values (``requires_grad_``, ``share_memory_``; see
#: ``NON_WRITING_METHODS``) but lists those that change a tensor's shape or storage instead of
#: its values (``set_``, the ``resize`` family): there is no value to rebind. ``record_stream_``
#: is not in the table either; it only tells the CUDA allocator which stream uses a tensor.
NOT_REWRITTEN = NON_WRITING_METHODS | frozenset(
    {
        "set_",
        "resize_",
        "resize_as_",
        "resize_as_sparse_",
        "sparse_resize_",
        "sparse_resize_and_clear_",
        "record_stream_",
    }
)

#: In-place methods whose stem exists in the table but computes something else:
#: ``x.bernoulli_(p)`` fills ``x`` with draws of probability ``p``, while ``x.bernoulli()``
#: draws with ``x``'s own values as the probabilities.
_STEM_DIFFERS = frozenset({"bernoulli_"})

#: In-place torch functions whose out-of-place value has another name: ``torch.zero_(x)``
#: has no ``torch.zero``; the value it writes is ``torch.zeros_like(x)``.
_FUNCTION_RENAMES = {"zero_": "zeros_like"}

#: Python's augmented operators: the method torch implements each by, and the binary
#: operator (class and spelling) that computes the same value out of place. Language
#: syntax; whether torch performs one in place comes from the table.
_AUGMENTED: dict[type[cst.BaseAugOp], tuple[str, type[cst.BaseBinaryOp], str]] = {
    cst.AddAssign: ("__iadd__", cst.Add, "+"),
    cst.SubtractAssign: ("__isub__", cst.Subtract, "-"),
    cst.MultiplyAssign: ("__imul__", cst.Multiply, "*"),
    cst.DivideAssign: ("__itruediv__", cst.Divide, "/"),
    cst.FloorDivideAssign: ("__ifloordiv__", cst.FloorDivide, "//"),
    cst.ModuloAssign: ("__imod__", cst.Modulo, "%"),
    cst.PowerAssign: ("__ipow__", cst.Power, "**"),
    cst.MatrixMultiplyAssign: ("__imatmul__", cst.MatrixMultiply, "@"),
    cst.BitAndAssign: ("__iand__", cst.BitAnd, "&"),
    cst.BitOrAssign: ("__ior__", cst.BitOr, "|"),
    cst.BitXorAssign: ("__ixor__", cst.BitXor, "^"),
    cst.LeftShiftAssign: ("__ilshift__", cst.LeftShift, "<<"),
    cst.RightShiftAssign: ("__irshift__", cst.RightShift, ">>"),
}

#: Expressions that never need parentheses as the right operand of a binary operator.
OPERAND_ATOMS: tuple[type[cst.BaseExpression], ...] = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.SimpleString,
)


# --------------------------------------------------------------------------- forms


@cache
def _clone_forms() -> frozenset[str]:
    """The in-place methods of the table whose twin writes into a clone."""
    table = load_table()
    stemless = {
        name
        for name in table.inplace_methods
        if name not in NOT_REWRITTEN and name != "copy_" and out_of_place_method(name) is None
    }
    return frozenset(stemless) | _STEM_DIFFERS


def method_form(name: str) -> Form | None:
    """How ``recv.name(...)`` goes out of place; ``None`` when it is not a write to rewrite.

    Names outside the table (``x.update_()``) are renamed to their stem. Private names
    (``_name_``, torch's internal spelling) are never rewritten.
    """
    if not is_inplace_name(name) or name.startswith("_") or name in NOT_REWRITTEN:
        return None
    if name == "copy_":
        return Form.COPY
    return Form.CLONE if name in _clone_forms() else Form.RENAME


def function_out_of_place(name: str) -> str:
    """The out-of-place function beside the in-place ``name``: ``relu_`` -> ``relu``."""
    return _FUNCTION_RENAMES.get(name, name[:-1])


@cache
def _binary_forms() -> dict[type[cst.BaseAugOp], tuple[type[cst.BaseBinaryOp], str]]:
    methods = load_table().methods
    return {
        aug: (binary, text)
        for aug, (dunder, binary, text) in _AUGMENTED.items()
        if dunder in methods and methods[dunder].inplace
    }


def binary_form(operator: cst.BaseAugOp) -> tuple[type[cst.BaseBinaryOp], str] | None:
    """The binary operator (class, spelling) of ``x op= y`` when torch performs it in place."""
    return _binary_forms().get(type(operator))


def inplace_position(name: str) -> int | None:
    """The 0-based position of the ``inplace`` argument of a function or module, by short name."""
    return inplace_flag_positions().get(name)


def positional_inplace(call: cst.Call, name: str) -> cst.Arg | None:
    """The positional argument of ``call`` at ``name``'s ``inplace`` position, if it is there."""
    position = inplace_position(name)
    args = positional(call)
    return args[position] if position is not None and position < len(args) else None


def method_chain(
    call: cst.Call, link: Callable[[str], bool]
) -> tuple[list[cst.Attribute], cst.BaseExpression]:
    """The methods of ``a.f(..).g(..)`` read from the outside in while ``link(name)`` holds,
    innermost first, and the expression the first of them is called on (``a``)."""
    methods: list[cst.Attribute] = []
    node: cst.BaseExpression = call
    while (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and link(node.func.attr.value)
    ):
        methods.insert(0, node.func)
        node = node.func.value
    return methods, node


# --------------------------------------------------------------------------- syntax


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    """The ``name=...`` argument of ``call``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list[cst.Arg]:
    """The positional arguments of ``call``, ``*args`` left out."""
    return [a for a in call.args if a.keyword is None and not a.star]


def is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def needs_parens(node: cst.BaseExpression) -> bool:
    """Whether ``node`` needs parentheses to become the right operand of a binary operator."""
    return not isinstance(node, OPERAND_ATOMS) and not node.lpar

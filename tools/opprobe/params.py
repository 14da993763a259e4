"""Positional parameter names, from ``inspect.signature`` or the aten schema of a binding."""

from __future__ import annotations

import contextlib
import inspect
import operator
import re
from collections.abc import Callable
from typing import Any

import torch
import torch._jit_internal

ParamsOf = Callable[[tuple[Any, ...], dict[str, Any]], list[str]]


def python_params(fn: Callable[..., Any]) -> list[str] | None:
    """Positional parameter names from ``inspect.signature`` (``*name`` for varargs)."""
    # F.max_pool2d & co. dispatch on ``return_indices``; read the full signature.
    with contextlib.suppress(KeyError, TypeError):
        fn = torch._jit_internal.boolean_dispatched[fn]["if_true"]
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    names: list[str] = []
    for param in signature.parameters.values():
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            names.append(param.name)
        elif param.kind is param.VAR_POSITIONAL:
            names.append("*" + param.name)
    if names in (["*args"], []) and "kwargs" in signature.parameters:
        return None  # an opaque (*args, **kwargs) wrapper
    return names


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _fits(value: Any, typ: Any) -> bool:
    """Whether a Python value can bind to an aten schema argument type."""
    kind = typ.kind()
    if kind == "OptionalType":
        return value is None or _fits(value, typ.getElementType())
    if kind == "TensorType":
        return isinstance(value, torch.Tensor)
    if kind == "ListType":
        element = typ.getElementType()
        if isinstance(value, (list, tuple)):
            return all(_fits(item, element) for item in value)
        return element.kind() in ("IntType", "SymIntType") and _is_int(value)
    if kind in ("IntType", "SymIntType"):
        return _is_int(value) or isinstance(value, torch.dtype)
    if kind in ("FloatType", "SymFloatType"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "NumberType":
        return isinstance(value, (int, float, complex))
    if kind == "BoolType":
        return isinstance(value, bool)
    if kind == "StringType":
        return isinstance(value, str)
    return False


def _positional(schema: Any, receiver: bool) -> list[Any]:
    """Positional schema arguments; for a method call ``self`` (the receiver) comes first."""
    positional = [arg for arg in schema.arguments if not arg.kwarg_only]
    if receiver:
        positional.sort(key=lambda arg: arg.name != "self")
    return positional


def schema_fits(
    schema: Any, args: tuple[Any, ...], kwargs: dict[str, Any], receiver: bool = False
) -> bool:
    positional = _positional(schema, receiver)
    if len(args) > len(positional):
        return False
    if not all(_fits(value, arg.type) for value, arg in zip(args, positional, strict=False)):
        return False
    by_name = {arg.name: arg for arg in schema.arguments}
    for key, value in kwargs.items():
        arg = by_name.get("self" if key == "input" else key)
        if arg is None or not _fits(value, arg.type):
            return False
    return all(arg.has_default_value() or arg.name in kwargs for arg in positional[len(args) :])


def aten_schemas(aten_name: str) -> list[Any] | None:
    """Schemas of the non-``out`` overloads of ``aten::<aten_name>``, or None if no such op."""
    packet = None if aten_name.startswith("__") else getattr(torch.ops.aten, aten_name, None)
    if not isinstance(packet, torch._ops.OpOverloadPacket):
        return None
    schemas = [getattr(packet, overload)._schema for overload in packet.overloads()]
    return [s for s in schemas if not any(arg.is_out for arg in s.arguments)]


def schema_params(
    aten_name: str, args: tuple[Any, ...], kwargs: dict[str, Any], receiver: bool = False
) -> list[str] | None:
    """Positional parameter names of the aten overload that the given arguments bind to."""
    schemas = aten_schemas(aten_name)
    if not schemas:
        return None
    chosen = next((s for s in schemas if schema_fits(s, args, kwargs, receiver)), None)
    if chosen is None:
        tensor_first = (
            s for s in schemas if s.arguments and s.arguments[0].type.kind() == "TensorType"
        )
        chosen = next(tensor_first, None)
    if chosen is None:
        return None
    return [arg.name for arg in _positional(chosen, receiver)]


def method_max_args(fn: Callable[..., Any], name: str) -> int | None:
    """The most positional arguments (after the receiver) the Tensor method ``name``
    accepts, or None when torch does not say: read from a Python signature, or from the
    binding's own complaint when called with too many (``takes 1 positional argument``);
    None for a Python ``*args``, an int list that may be spread (``x.view(2, 3)``), or a
    binding that lists no count (``add_`` also takes the deprecated ``(alpha, other)``)."""
    static = python_params(fn)
    if static is not None:
        return None if any(p.startswith("*") for p in static) else max(len(static) - 1, 0)
    for schema in aten_schemas(name) or ():
        if not any(a.name == "self" and a.type.kind() == "TensorType" for a in schema.arguments):
            continue  # a TorchScript list or number overload (``mul.left_t``), no method
        positional = [a for a in _positional(schema, receiver=True) if a.name != "self"]
        first = positional[0].type if positional else None
        if first is not None and first.kind() == "OptionalType":
            first = first.getElementType()
        if first is not None and first.kind() == "ListType":
            return None
    try:
        getattr(torch.empty(0), name)(*[object()] * _TOO_MANY)
    except TypeError as error:
        said = _TAKES.search(str(error))
        if said is not None:
            return 0 if said.group(1) is None else int(said.group(1))
    except Exception:  # any other failure says nothing about the count
        return None
    return None


#: arguments no Tensor method takes that many of
_TOO_MANY = 12
#: ``takes no arguments``, ``takes 1 positional argument``, ``takes from 0 to 2 ...``
_TAKES = re.compile(r"takes (?:no arguments|(?:from \d+ to )?(\d+) positional argument)")


def operator_params(name: str) -> list[str] | None:
    """Parameter names for a C-implemented operator dunder, from the ``operator`` module."""
    if not (name.startswith("__") and name.endswith("__")):
        return None
    base = name if hasattr(operator, name) else "__" + name[3:]
    try:
        names = list(inspect.signature(getattr(operator, base)).parameters)
    except (AttributeError, TypeError, ValueError):
        return None
    rename = {"a": "self", "b": "other", "c": "value"}
    return [rename.get(param, param) for param in names]


def param_name(params: list[str], index: int) -> str:
    """Name of the parameter receiving positional argument ``index``."""
    for position, name in enumerate(params):
        if name.startswith("*") or position == index:
            return name
    return f"arg{index}"


def inplace_param(fn: Callable[..., Any]) -> dict[str, Any] | None:
    """The ``inplace`` parameter of a Python function or constructor, with its position."""
    params = python_params(fn) or []
    if "inplace" not in params:
        return None
    return {"name": "inplace", "index": params.index("inplace")}


def params_resolver(fn: Callable[..., Any], method: str | None = None) -> ParamsOf:
    """Parameter names from the Python signature, else from the aten schema of the binding.

    Builtins are named after their aten op (``F.logsigmoid.__name__ == "log_sigmoid"``).
    Function bindings expose aten's ``self`` as ``input``; method bindings take ``self`` as
    the receiver, so it is listed first.
    """
    static = python_params(fn)
    aten_name = getattr(fn, "__name__", "")

    def resolve(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
        if static is not None:
            return static
        if method is None:
            names = schema_params(aten_name, args, kwargs) or []
            return ["input" if name == "self" else name for name in names]
        names = schema_params(aten_name, args, kwargs, receiver=True)
        return names or operator_params(method) or ["self"]

    return resolve

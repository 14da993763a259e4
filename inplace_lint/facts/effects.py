"""What a call does beyond its result, found syntactically before the pass: the autograd steps
a function takes on its parameters, and the in-place writes a method makes to ``self``.

A training helper such as ``update_params(optim, loss)`` runs ``loss.backward()`` and then
``optim.step()``: for its callers it is a backward point on the tensor they pass and an
optimizer step on the optimizer they pass, in that order. :func:`step_effects` lists those
calls so that a caller can replay them on its own values (``facts.steps``). A method such as
MoCo's ``_dequeue_and_enqueue`` writes ``self.queue[...]`` in place: :func:`attribute_writes`
lists those writes, so that a caller's saves of ``self.queue`` see them. The in-place writes
a function makes to its parameters are the business of :mod:`summaries`.

Limits: only step calls made unconditionally (in the body itself or under ``with``), on a
parameter the function never rebinds or (for a method's ``step()``) on ``self.x``, are
listed; a call under ``if``, in a loop or in ``try`` may not run, and is left out rather
than guessed. Attribute writes are listed wherever they sit (a write under ``if
self.training:`` is a write the caller may meet), except writes through ``.data``, which
autograd does not see.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from inplace_lint.facts.classes import literal_bool
from inplace_lint.facts.names import self_attribute
from inplace_lint.facts.ops import OpTable
from inplace_lint.facts.syntax import bound_names
from inplace_lint.facts.walk import own_nodes

#: the methods replayed at a call site: a backward point and an optimizer step
_STEPS = ("backward", "step")


@dataclass(frozen=True)
class Effect:
    """``param.backward(...)`` or ``param.step()`` on parameter ``param`` (at ``index``, not
    counting ``self``), at ``node`` in statement ``stmt``; or, in a method, ``self.x.step()``
    (``param`` is ``self.x``, ``index`` -1)."""

    kind: str  # "backward" or "step"
    index: int
    param: str
    node: cst.Call
    stmt: cst.CSTNode
    #: backward only: whether the graph is kept (``retain_graph=True``), or the parameter
    #: (name, index, default) whose value decides it
    retain: bool | tuple[str, int, bool] = False


def step_effects(func: cst.FunctionDef, skip_first: bool) -> list[Effect]:
    """The unconditional ``P.backward()`` and ``P.step()`` calls on parameters, in order."""
    params = [*func.params.posonly_params, *func.params.params]
    if skip_first and params:
        params = params[1:]
    index = {p.name.value: i for i, p in enumerate(params)}
    if not index and not skip_first:
        return []
    rebound: dict[str, int] | None = None  # counted once a step or backward is seen
    found: list[Effect] = []
    for stmt, call in _unconditional_calls(func.body.body):
        method = call.func
        if not isinstance(method, cst.Attribute) or method.attr.value not in _STEPS:
            continue
        receiver = method.value
        kind = method.attr.value
        own = self_attribute(receiver) if skip_first and kind == "step" else None
        if own is not None:  # ``self.opt.step()`` in a method: the caller's ``self.opt``
            found.append(Effect(kind, -1, f"self.{own}", call, stmt))
            continue
        if not isinstance(receiver, cst.Name) or receiver.value not in index:
            continue
        name = receiver.value
        if rebound is None:
            rebound = bound_names(func)[0]
        if rebound.get(name):
            continue
        retain = _retain(call, params, index) if kind == "backward" else False
        found.append(Effect(kind, index[name], name, call, stmt, retain))
    return found


def _unconditional_calls(
    body: tuple[cst.BaseStatement, ...] | list[cst.BaseStatement],
) -> list[tuple[cst.CSTNode, cst.Call]]:
    """Expression statements that are calls, in the body and in ``with`` blocks."""
    out: list[tuple[cst.CSTNode, cst.Call]] = []
    for stmt in body:
        if isinstance(stmt, cst.With) and isinstance(stmt.body, cst.IndentedBlock):
            out += _unconditional_calls(stmt.body.body)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    out.append((stmt, small.value))
    return out


def _retain(
    call: cst.Call, params: list[cst.Param], index: dict[str, int]
) -> bool | tuple[str, int, bool]:
    """``retain_graph=`` of a backward call: a literal, or the parameter passed through."""
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value not in ("retain_graph", "create_graph"):
            continue
        value = arg.value
        if isinstance(value, cst.Name) and value.value in index:
            param = params[index[value.value]]
            default = param.default is not None and literal_bool(param.default) is True
            return (value.value, index[value.value], default)
        return literal_bool(value) is not False
    return False


@dataclass(frozen=True)
class AttributeWrite:
    """An in-place write to ``self.<attr>`` (or an element or view of it) at ``node``."""

    attr: str
    node: cst.CSTNode
    stmt: cst.CSTNode
    what: str
    augmented: bool = False  # ``self.x += y``: in place only if ``self.x`` is a tensor


def attribute_writes(func: cst.FunctionDef, table: OpTable) -> list[AttributeWrite]:
    """The in-place writes of a method to attributes of ``self``, in source order."""
    found: list[AttributeWrite] = []
    stmt: cst.CSTNode = func
    for node in own_nodes(func):
        kind = type(node)  # libcst's node classes have no subclasses
        if kind is cst.SimpleStatementLine:
            stmt = node
        elif kind is cst.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                attr = _self_root(target.target, table) if _is_item(target.target) else None
                if attr is not None:
                    found.append(AttributeWrite(attr, target.target, stmt, "subscript assignment"))
        elif kind is cst.AugAssign:
            attr = _self_root(node.target, table)  # type: ignore[attr-defined]
            if attr is not None:
                what = "augmented assignment"
                found.append(AttributeWrite(attr, node.target, stmt, what, augmented=True))  # type: ignore[attr-defined]
        elif kind is cst.Call:
            found += _call_writes(node, stmt, table)  # type: ignore[arg-type]
    return found


def _call_writes(node: cst.Call, stmt: cst.CSTNode, table: OpTable) -> list[AttributeWrite]:
    """``self.x.mul_(m)``, ``self.x[i].copy_(y)``, ``f(..., out=self.x)``."""
    found: list[AttributeWrite] = []
    func = node.func
    if isinstance(func, cst.Attribute) and table.inplace_call(func.attr.value, node.args):
        attr = _self_root(func.value, table)
        if attr is not None:
            found.append(AttributeWrite(attr, node, stmt, f"`.{func.attr.value}()`"))
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "out":
            attr = _self_root(arg.value, table)
            if attr is not None:
                found.append(AttributeWrite(attr, node, stmt, "`out=`"))
    return found


def _is_item(target: cst.BaseExpression) -> bool:
    return isinstance(target, cst.Subscript)


def _self_root(node: cst.BaseExpression, table: OpTable) -> str | None:
    """``attr`` for ``self.attr``, an element of it or a view of it; None through ``.data``
    (hidden from autograd) or anything else."""
    while True:
        if isinstance(node, cst.Subscript):
            node = node.value
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in table.view_methods
        ):
            node = node.func.value
        elif isinstance(node, cst.Attribute):
            inner = node.value
            if isinstance(inner, cst.Name) and inner.value == "self":
                return node.attr.value
            return None
        else:
            return None


def updates_param_groups(func: cst.FunctionDef, table: OpTable) -> bool:
    """An optimizer method that writes its parameters in place: ``for group in
    self.param_groups: for p in group["params"]: p.add_(e_w)`` (SAM's ``first_step``). A call
    of it is a parameter update like ``step()``."""
    groups: set[str] = set()
    params: set[str] = set()
    for node in own_nodes(func):
        if isinstance(node, cst.For) and isinstance(node.target, cst.Name):
            iterated = node.iter
            if self_attribute(iterated) == "param_groups":
                groups.add(node.target.value)
            elif (
                isinstance(iterated, cst.Subscript)
                and isinstance(iterated.value, cst.Name)
                and iterated.value.value in groups
            ):
                params.add(node.target.value)
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and table.inplace_call(node.func.attr.value, node.args)
        ):
            receiver = node.func.value
            if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
                receiver = receiver.value
            if isinstance(receiver, cst.Name) and receiver.value in params:
                return True
    return False

"""Builtin calls the interpreter models, and torch functions held as values.

A torch function is often kept before it is called: ``self.act = F.relu`` in ``__init__``,
``self.activation = getattr(F, activation)`` with ``activation="relu"`` given by every
construction of the class (ConfGF's GIN), ``act = torch.sigmoid``. Evaluating such an
expression gives a *function value* (kind OTHER, origin ``torch_def``, the qualified name as
its group's name), and calling a name or attribute that holds one function value is calling
that function: its saves and views come from the op table as for ``F.relu(x)``. A same-file
function held so (origin ``def``: ``self.radial_function = radial_function``) is called as
the file's function, its summary applied to what the call passes (``_function_call``). A
torch function every construction of a class passes to an ``__init__`` parameter stored on
``self`` (``Proj(torch.tanh)``, or the constructing class's ``self.act`` set to one) is held
the same way (``binder._given_torch_function``), also where ``__init__`` stores it only when
it is not None (``loss_fn if loss_fn is not None else F.mse_loss``: the test is decided for
a name that holds functions only).

Limits: one function per name (two possible functions are unknown); ``getattr`` only on a
torch namespace with a string literal or an ``__init__`` parameter that every construction in
the file gives one string literal (``constructed.constructed_strings``).
"""

from __future__ import annotations

import builtins

import libcst as cst

from inplace_lint.facts.call_shapes import Args, builds_over_parameters, lambda_map
from inplace_lint.facts.constructed import string_literal
from inplace_lint.facts.model import Kind, Value, new_value
from inplace_lint.facts.op_extras import _METADATA_CALLS
from inplace_lint.facts.state import AnalyzerBase
from inplace_lint.facts.walk import nested_scope, own_nodes, walk

FUNCTION_ORIGIN = "torch_def"
_BUILTINS = frozenset(vars(builtins))
NONE_ORIGIN = "none"  # the value of ``None``: never what a call is made on
#: namespaces whose attributes ``getattr`` may name (``getattr(F, "relu")``)
_NAMESPACES = ("torch", "torch.nn.functional", "torch.special", "torch.linalg")


class Callables(AnalyzerBase):
    """Calls of builtins (``map``, ``list``, ``getattr``, ``len``) and of held functions."""

    def _function_call(
        self, name: str, node: cst.Call, args: Args | None = None, values: list[Value] | None = None
    ) -> list[Value]:
        """A call of the same-file function ``name`` (or of an unknown one by that name):
        its writes to what this call passes, and what it returns."""
        args = self._args(node) if args is None else args
        given_back = self._record_call(name, node, args)
        if given_back:
            return given_back
        made = returned_functions(self.functions[name]) if name in self.functions else None
        if made is not None and all(self._runs_no_model(f) for f in made):
            return [new_value(Kind.OTHER, name, origin="closure")]  # a closure, not a model
        inlined = self._inline_call(name, args)
        if inlined is not None:
            return inlined
        return [self._unknown_callable(name, values, args)]

    def _runs_no_model(self, func: cst.FunctionDef | cst.Lambda) -> bool:
        """Every call in ``func``'s own body is of something imported (torch's functions, a
        project helper), a Python builtin, a same-file plain function or a tensor method the
        op table knows; none of a value it holds (``model(x)``, ``self.net(x)``, ``fn(x)``),
        which may be a model whose output needs grad. So a closure of ``autograd.grad`` calls
        or ``lambda v: v * 2`` runs no model."""
        for node in walk(func.body, skip=nested_scope):
            if not isinstance(node, cst.Call):
                continue
            callee = node.func
            if self.imports.qualify(callee) is not None:
                continue
            if isinstance(callee, cst.Name) and (
                callee.value in self.functions or callee.value in _BUILTINS
            ):
                continue
            if isinstance(callee, cst.Attribute) and callee.attr.value in self.table.methods:
                continue
            return False
        return True

    def _unknown_callable(self, name: str, values: list[Value] | None, args: Args) -> Value:
        """What a call of a name the file does not define gives: an optimizer over the
        parameters passed first (``optimizer_class(self.qf1.parameters(), lr=lr)``, which
        steps those if stepped at all), else an unknown value."""
        if builds_over_parameters(args) and all(v.kind is Kind.OTHER for v in values or ()):
            optimizer = new_value(Kind.OPTIMIZER, name)
            optimizer.elements = self._param_groups(args)
            return optimizer
        return self._unknown(inputs=self._plain_call_inputs(name, args))

    def _builtin_call(
        self, name: str, values: list[Value] | None, node: cst.Call
    ) -> list[Value] | None:
        """What a builtin call gives, when ``name`` is that builtin (not rebound); None for
        any other call."""
        if values is not None:
            return None
        if name == "map" and lambda_map(node):
            return [self._mapped(node)]
        if name in ("dict", "list") and not node.args:
            return [new_value(Kind.CONTAINER, literal_container=True)]  # as ``{}``, ``[]``
        if name in ("list", "tuple", "dict") and len(node.args) == 1 and not node.args[0].keyword:
            inner = self._eval(node.args[0].value)
            named = any(v.kind is Kind.PARAM_ITER and v.origin == "named" for v in inner)
            if name == "dict" and not named:
                return [self._unknown(inputs=inner)]
            if any(v.kind in (Kind.PARAM_ITER, Kind.CONTAINER) for v in inner):
                # ``list(model.parameters())``; ``dict(model.named_parameters())``: parameters
                listed = new_value(Kind.CONTAINER, origin="named" if named else "")
                listed.elements = self._iterate(inner)
                return [listed]
            return [self._unknown(inputs=inner)]
        if name in _METADATA_CALLS:
            with self._meta:
                self._args(node)
            return [new_value(Kind.OTHER)]
        if name == "getattr":
            qualified = self._getattr_function(node)
            if qualified is not None:
                return [function_value(qualified)]
        return None

    def _held_call(self, values: list[Value] | None, node: cst.Call) -> list[Value] | None:
        """``self.act(x)`` where ``self.act`` holds one torch function (or ``None`` on another
        path): that function's call."""
        names = {v.group.name for v in values or () if v.origin == FUNCTION_ORIGIN}
        others = [v for v in values or () if v.origin not in (FUNCTION_ORIGIN, NONE_ORIGIN)]
        if len(names) != 1 or others:  # ``None`` on another path cannot be what is called
            return None
        return self._torch_call(names.pop(), node)

    def _getattr_function(self, node: cst.Call) -> str | None:
        """``getattr(F, "relu")`` (or a parameter given one string): ``torch.nn.functional.relu``
        when the op table knows such a function."""
        if len(node.args) != 2 or any(a.keyword or a.star for a in node.args):
            return None
        namespace = self.imports.qualify(node.args[0].value)
        if namespace not in _NAMESPACES:
            return None
        attr = self._string_of(node.args[1].value)
        qualified = f"{namespace}.{attr}" if attr is not None else None
        return qualified if qualified in self.table.functions else None

    def _string_of(self, expr: cst.BaseExpression) -> str | None:
        """A string literal, or an ``__init__`` parameter every construction of the class
        gives the same string literal."""
        literal = string_literal(expr)
        if literal is not None:
            return literal
        ctx = self.scope.ctx
        if not isinstance(expr, cst.Name) or ctx.cls is None or ctx.name != "__init__":
            return None
        return ctx.cls.strings.get(expr.value)


def function_value(qualified: str) -> Value:
    """The value of an expression that names the torch function ``qualified``."""
    return new_value(Kind.OTHER, qualified, origin=FUNCTION_ORIGIN)


def returned_functions(func: cst.FunctionDef) -> list[cst.FunctionDef | cst.Lambda] | None:
    """The functions ``func`` makes and hands back, when every ``return`` gives one: a
    lambda, or a name only a ``def`` in its own body binds (``build_hvp`` returning its
    ``_eval``); None otherwise."""
    nested: dict[str, cst.FunctionDef] = {}
    assigned: set[str] = set()
    for node in own_nodes(func):
        if isinstance(node, cst.FunctionDef) and node is not func:
            nested[node.name.value] = node
        elif isinstance(node, cst.AssignTarget | cst.AugAssign | cst.AnnAssign) and isinstance(
            node.target, cst.Name
        ):
            assigned.add(node.target.value)
    found: list[cst.FunctionDef | cst.Lambda] = []
    for node in own_nodes(func):
        if type(node) is not cst.Return:
            continue
        value = node.value
        if isinstance(value, cst.Lambda):
            found.append(value)
        elif isinstance(value, cst.Name) and value.value in nested:
            found.append(nested[value.value])
        else:
            return None
    return found if found and not set(nested) & assigned else None

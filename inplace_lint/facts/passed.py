"""What the calls of a same-file function pass it, as its parameters see it.

A plain function's parameters are unknown when it is read alone. Every same-file call it has
tells more: the same module instance (a same-file class's, or a torch module built once), the
same same-file function (``train(g, d, x, loss_nonsaturating)``), an optimizer built from the
parameters of modules passed beside it. Where every call analysed so far agrees, the
parameter is that module, that function or an optimizer of those modules' parameters.

Limits: calls are analysed before the function only where they come first in the analysis
order (module-level code, then classes, then plain functions in file order); a call through
``*args``/``**kwargs`` passes nothing known; methods' parameters are not instantiated this
way.
"""

from __future__ import annotations

from typing import TypeVar

import libcst as cst

from inplace_lint.facts.model import Kind, ModuleSpec, Value, instance_class, new_value
from inplace_lint.facts.state import AnalyzerBase

_T = TypeVar("_T")

#: the origins of values that are functions running no model: a closure a same-file function
#: handed back (``Callables._runs_no_model`` checked what it makes), a torch function held as a
#: value; not any ``def`` (its body may call a model)
PLAIN = frozenset({"closure", "torch_def"})


class Passed(AnalyzerBase):
    """The room that notes what calls pass and instantiates parameters with it."""

    def _note_passed_module(self, callee: str, key: int | str, values: list[Value]) -> None:
        """The module this call passes at ``key``: a same-file class's instance (by class),
        or a torch module built once (``d = nn.Sequential(...)``, by its construction)."""
        modules = self.arg_modules.setdefault(callee, {})
        specs = {
            _module_identity(v.module): v.module
            for v in values
            if v.kind is Kind.MODULE and v.module is not None and _module_identity(v.module)
        }
        spec = next(iter(specs.values())) if len(specs) == 1 and len(values) == 1 else None
        earlier = modules.get(key, spec)
        same = (
            earlier is not None
            and spec is not None
            and _module_identity(earlier) == _module_identity(spec)
        )
        modules[key] = spec if same else None

    def _note_passed_function(
        self, callee: str, key: int | str, passed: cst.BaseExpression
    ) -> None:
        """Which same-file function this call passes at ``key``, if one (by its name)."""
        name = passed.value if isinstance(passed, cst.Name) else None
        if name is not None and (name not in self.functions or _shadowed(name, self.scope.env)):
            name = None
        _agree(self.arg_functions.setdefault(callee, {}), key, name)

    def _note_passed_plain(
        self, callee: str, key: int | str, passed: cst.BaseExpression, values: list[Value]
    ) -> None:
        """Whether this call passes a function that runs no model at ``key``: such a lambda, or
        values that are all such functions (a closure a same-file function returned, a torch
        function), none a module."""
        plain = (isinstance(passed, cst.Lambda) and self._runs_no_model(passed)) or (
            bool(values) and all(v.kind is Kind.OTHER and v.origin in PLAIN for v in values)
        )
        _agree(self.arg_plain.setdefault(callee, {}), key, plain or None)

    def _note_passed_instance(self, callee: str, key: int | str, values: list[Value]) -> None:
        """The same-file plain class this call passes an instance of at ``key`` (built by its
        constructor: ``flip = RandomVerticalFlip(p=0.5)``), if one."""
        _agree(self.arg_instances.setdefault(callee, {}), key, instance_class(values))

    def _passed_instance(self, name: str, position: int) -> str | None:
        """The same-file plain class every same-file call of this plain function passes an
        instance of for this parameter: calling it calls that class's ``__call__``."""
        found = set(self._passed_at(self.arg_instances, name, position))
        return found.pop() if len(found) == 1 else None

    def _passed_plain(self, name: str, position: int) -> bool:
        """Every same-file call of this plain function passes a plain function for this
        parameter (``_conjugate_gradient(f_Ax, b)`` after ``f_Ax = build_hvp(...)``)."""
        found = self._passed_at(self.arg_plain, name, position)
        return bool(found) and all(found)

    def _passed_at(
        self, table: dict[str, dict[int | str, _T]], name: str, position: int
    ) -> list[_T]:
        """What the same-file calls of the plain function being analysed pass for this
        parameter, by position and by keyword (as ``_agree`` kept it); nothing in a method,
        whose parameters are not instantiated this way."""
        ctx = self.scope.ctx
        if ctx.node is None or ctx.cls is not None:
            return []
        passed = table.get(ctx.name, {})
        return [passed[key] for key in (position, name) if key in passed]

    def _note_passed_optimizers(
        self, callee: str, keyed: list[tuple[int | str, list[Value]]]
    ) -> None:
        """``train_step(enc, disc, opt_enc, opt_disc)``: which modules passed beside each
        optimizer (``keyed``: what the call passes, by position or keyword) it updates (by
        the parameters it was built from)."""
        table = self.arg_optimizers.setdefault(callee, {})
        for key, values in keyed:
            stepped = {e.group.id for v in values if v.kind is Kind.OPTIMIZER for e in v.elements}
            modules = frozenset(
                k
                for k, vs in keyed
                if any(v.kind is Kind.MODULE and v.group.id in stepped for v in vs)
            )
            _agree(table, key, modules or None)

    def _bind_passed_optimizers(self, names: list[str]) -> None:
        """A parameter every same-file call passes an optimizer for, built from the
        parameters of modules passed beside it: an optimizer of those parameters here."""
        for index, name in enumerate(names):
            found = self._passed_at(self.arg_optimizers, name, index)
            if not found or found[0] is None:
                continue
            modules = [
                v
                for key in found[0]
                for v in self.scope.env.get(names[key] if isinstance(key, int) else key, [])
                if v.kind is Kind.MODULE
            ]
            if modules:
                optimizer = new_value(Kind.OPTIMIZER, name)
                optimizer.elements = [
                    Value(kind=Kind.TENSOR, group=m.group, grad=2, leaf=True) for m in modules
                ]
                self._bind(name, [optimizer])

    def _passed_function(self, name: str, position: int) -> str | None:
        """The same-file function every same-file call of this plain function passes for
        this parameter (``train(g, d, x, loss_nonsaturating)``), by position or keyword."""
        found = set(self._passed_at(self.arg_functions, name, position))
        return found.pop() if len(found) == 1 else None

    def _passed_module(self, name: str, position: int) -> ModuleSpec | None:
        """The same-file module class instance that every same-file call of this plain
        function passes for this parameter (``grad_cam(model, x)`` after
        ``model = SmallCNN()``), by position or by keyword."""
        found = self._passed_at(self.arg_modules, name, position)
        if not found or any(spec is None for spec in found):
            return None
        specs = {spec.user_class for spec in found if spec is not None}
        return found[0] if len(specs) == 1 else None


def _agree(table: dict[int | str, _T | None], key: int | str, found: _T | None) -> None:
    """Note what one call passes at ``key``: it stays known while every call agrees."""
    earlier = table.get(key, found)
    table[key] = found if earlier == found else None


def _module_identity(spec: ModuleSpec) -> str | int | None:
    """What makes two passed modules the same one: a same-file class, or the torch module's
    construction node; None for a module of unknown origin."""
    if spec.user_class:
        return spec.user_class
    return id(spec.node) if spec.qualname is not None and spec.node is not None else None


def _passed_function(
    values: list[Value] | None, name: str, functions: dict[str, cst.FunctionDef]
) -> str | None:
    """The same-file function a parameter holds (bound by ``Binder``), if ``name`` is one."""
    if not values or any(v.origin != "def" for v in values):
        return None
    held = {v.group.name for v in values}
    found = held.pop() if len(held) == 1 else None
    return found if found in functions and found != name else None


def _shadowed(name: str, env: dict[str, list[Value]]) -> bool:
    """``name`` is bound in this scope to something other than a ``def`` of that name."""
    values = env.get(name)
    return values is not None and not any(v.origin == "def" for v in values)

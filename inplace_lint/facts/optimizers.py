"""Optimizers as the interpreter sees them: which parameters a step updates, and state dicts.

``optimizer.step()`` (or a same-file optimizer class's method that writes the parameters of
its ``param_groups`` in place, SAM's ``first_step()``) is a write to every parameter the
optimizer was built over, when they may have gradients; an optimizer whose construction is
not in view is matched to the model by its name (``d_optimizer`` steps ``discriminator``).
``state_dict()`` hands out the module's own tensors (a snapshot an update changes), and
``load_state_dict()`` copies into them.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.classes import ClassFacts
from inplace_lint.facts.effects import updates_param_groups
from inplace_lint.facts.heuristics import _model_matches, _optimizer_hint
from inplace_lint.facts.model import Group, Kind, Value, new_value
from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.state import AnalyzerBase
from inplace_lint.facts.walk import own_nodes

Args = list[tuple[str, cst.Arg, list[Value]]]


class Optimizers(AnalyzerBase):
    """The room of optimizer steps and state dicts (see the module docstring)."""

    def _step_call(
        self, node: cst.Call, func: cst.Attribute, receiver: list[Value], args: Args
    ) -> bool:
        """``optimizer.step()`` (or a same-file optimizer's ``first_step()``): a write to the
        parameters it updates, when they may have gradients. Whether it was one."""
        method = func.attr.value
        if method != "step" and not self._updates_parameters(receiver, method):
            return False
        stepped = self._optimizer_params(func.value, receiver, args)
        # With no gradients yet (straight-line code before any backward) step() skips
        # every parameter; in a loop, a function or after a backward it updates them.
        scope = self.scope
        may_have_grads = scope.backward_seen or self._loop_depth.depth or scope.ctx.node
        if stepped is None or not may_have_grads:
            return False
        # reported at the call, like ``step()``: the method itself is correct, the call is
        # what moves the weights too early (and what a fix can move)
        self._write(stepped, node, f"`{self._text(func)}()`", optimizer=True)
        return True

    def _updates_parameters(self, receiver: list[Value], method: str) -> bool:
        """``optimizer.first_step()`` on a same-file optimizer class whose method writes the
        parameters of its ``param_groups`` in place: an update like ``step()``."""
        for value in receiver:
            cls_name = value.module.user_class if value.module is not None else None
            cls = self.classes.get(cls_name) if cls_name else None
            if (
                value.kind is Kind.OPTIMIZER
                and cls is not None
                and method in cls.methods
                and updates_param_groups(cls.methods[method], self.table)
            ):
                return True
        return False

    def _optimizer_params(
        self,
        receiver_node: cst.BaseExpression,
        receiver: list[Value],
        args: list[tuple[str, cst.Arg, list[Value]]],
    ) -> list[Value] | None:
        """The parameters an ``X.step()`` call updates, or None if it is no optimizer step."""
        optimizers = [v for v in receiver if v.kind is Kind.OPTIMIZER]
        if optimizers:
            return [e for o in optimizers for e in o.elements]
        owned = self._owned_optimizer(receiver_node)
        if owned is not None:
            return owned
        if args and not args[0][0]:
            inner = [v for v in args[0][2] if v.kind is Kind.OPTIMIZER]
            if inner:
                return [e for o in inner for e in o.elements]
            name = dotted_name(args[0][1].value)
            hint = _optimizer_hint(name) if name else None
            return self._hinted_params(hint) if hint is not None else None
        name = dotted_name(receiver_node)
        hint = _optimizer_hint(name) if name else None
        if hint is None or any(v.kind is Kind.TENSOR and v.sure for v in receiver):
            return None
        return self._hinted_params(hint)

    def _state_method(
        self,
        method: str,
        receiver: list[Value],
        args: list[tuple[str, cst.Arg, list[Value]]],
        node: cst.Call,
        func: cst.Attribute,
    ) -> list[Value] | None:
        """``X.state_dict()``: a snapshot that aliases X's tensors; ``module.load_state_dict(d)``
        writes the module's (its result is then what any other call gives)."""
        # no tensor has ``state_dict()``: an unknown receiver is some stateful object
        owners = [v for v in receiver if v.kind is not Kind.CONTAINER and not v.sure_tensor]
        if method == "state_dict" and owners and not args:
            return [self._state_alias(owners)]
        modules = [v for v in receiver if v.kind is Kind.MODULE]
        if method == "load_state_dict" and modules and may_load(args):
            self._load_state(modules, args[0][2], node, self._text(func))
        return None

    def _state_alias(self, modules: list[Value]) -> Value:
        """``model.state_dict()``: a dict whose tensors are the module's own parameters and
        buffers (detached, the same storage): a later in-place update of the module (an
        optimizer step) changes what the dict holds. An optimizer's holds its own state
        tensors (moments) as they are; an object of unknown kind (``self.trainer_model``
        stored from a constructor's argument) counts by its storage group too."""
        state = new_value(Kind.CONTAINER, snapshot=True)
        now = self._next()
        for module in modules:
            # the module's parameters themselves: a write through one is meant for the module
            alias = Value(kind=Kind.TENSOR, group=module.group, grad=0, leaf=True, via_detach=True)
            state.elements.append(alias)
            state.added[alias.id] = now
        return state

    def _load_state(
        self, modules: list[Value], source: list[Value], node: cst.Call, what: str
    ) -> None:
        """``model.load_state_dict(d)`` copies into the module's parameters and buffers in
        place (``param.copy_(d[name])`` under ``no_grad``), as an optimizer step does; from
        the module's own ``state_dict()`` it copies each tensor onto itself: no change."""
        own = {e.group.id for v in source if v.snapshot for e in v.elements}
        params = [
            Value(kind=Kind.TENSOR, group=m.group, grad=2, leaf=True)
            for m in modules
            if m.group.id not in own
        ]
        if params:
            self._write(params, node, f"`{what}()`", no_grad=True)

    def _owned_optimizer(self, receiver_node: cst.BaseExpression) -> list[Value] | None:
        """``self.value.optimizer.step()`` where the module's class builds ``self.optimizer =
        Adam(self.parameters())`` in ``__init__``: that module's own parameters."""
        if not isinstance(receiver_node, cst.Attribute):
            return None
        with self._meta:
            owners = self._eval(receiver_node.value)
        modules = [v for v in owners if v.kind is Kind.MODULE and v.module is not None]
        attr = receiver_node.attr.value
        found = [
            m
            for m in modules
            if any(_builds_own_optimizer(self.classes.get(c), attr) for c in m.module.classes)
        ]
        if not found or len(found) != len(modules):
            return None
        return [Value(kind=Kind.TENSOR, group=m.group, grad=2, leaf=True) for m in found]

    def _hinted_params(self, hint: str) -> list[Value]:
        """Parameters of the models whose names match an optimizer's name (``opt_d`` -> ``D``)."""
        groups: dict[int, Group] = {}
        for name, group in self.scope.callables.items():
            if _model_matches(hint, name):
                groups[group.id] = group
        return [Value(kind=Kind.TENSOR, group=g, grad=2) for g in groups.values()]


def may_load(args: Args) -> bool:
    """Whether a ``load_state_dict`` call's argument may be a state dict (not a path)."""
    return bool(args) and not isinstance(args[0][1].value, cst.SimpleString)


def _builds_own_optimizer(cls: ClassFacts | None, attr: str) -> bool:
    """``__init__`` assigns ``self.<attr> = <Optimizer>(self.parameters(), ...)``."""
    init = cls.methods.get("__init__") if cls is not None else None
    if init is None:
        return False
    for node in own_nodes(init):
        if not isinstance(node, cst.Assign) or not isinstance(node.value, cst.Call):
            continue
        stores = [
            t.target
            for t in node.targets
            if isinstance(t.target, cst.Attribute)
            and t.target.attr.value == attr
            and dotted_name(t.target.value) == "self"
        ]
        if stores and node.value.args and _self_parameters(node.value.args[0].value):
            return True
    return False


def _self_parameters(node: cst.BaseExpression) -> bool:
    """``self.parameters()`` (or ``self.named_parameters()``)."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("parameters", "named_parameters")
        and dotted_name(node.func.value) == "self"
    )

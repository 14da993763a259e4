"""The parameters room: what a function's parameters hold when its body starts.

A parameter's value comes from its annotation and default, from what the file's calls pass
(``arg_grads``, ``arg_modules``, ``arg_sure``: the strongest grad, the one same-file module,
whether a sure tensor), and, in ``__init__``, from what every construction of the class gives
(``constructed``). Limits: calls seen so far only (``call_order`` runs callers first); a
parameter no call passes keeps what its annotation says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import libcst as cst

from inplace_lint.facts.callables import function_value
from inplace_lint.facts.classes import given_parameters
from inplace_lint.facts.constructed import init_assignments, stored_params
from inplace_lint.facts.containers import container_params
from inplace_lint.facts.heuristics import (
    _INTEGER_NAME,
    _SIZE_NAME,
    container_annotation,
    other_annotation,
)
from inplace_lint.facts.model import INSTANCE_ORIGIN, Kind, ModuleSpec, Value, new_value
from inplace_lint.facts.names import self_attribute
from inplace_lint.facts.state import AnalyzerBase
from inplace_lint.facts.syntax import _is_static, is_none, tuple_annotation

_T = TypeVar("_T")


class Params(AnalyzerBase):
    """The parameters room of the interpreter (see the module docstring)."""

    def _bind_params(self, params: Sequence[cst.Param]) -> None:
        ctx = self.scope.ctx
        is_method = ctx.cls is not None and not _is_static(ctx.node)
        for index, param in enumerate(params):
            name = param.name.value
            if index == 0 and (is_method or ctx.role.startswith("fn_")):
                self._bind(name, [new_value(Kind.OTHER, name)])
                continue
            value = self._param_value(param, index)
            position = index - 1 if is_method else index  # as callers count their arguments
            module = self._passed_module(name, position)
            if module is not None and (
                value.origin == "arg" or value.kind is Kind.MODULE or _callable(param)
            ):  # a module passed where a callable is asked for (``radiance_field: Callable``)
                value = new_value(Kind.MODULE, name, module=module)
            given = self._given_module(name)
            if given is not None:
                value = given
            function = self._passed_function(name, position) or self._given_function(name)
            if function is not None:  # every call passes this same-file function
                value = new_value(Kind.OTHER, function, origin="def")
            elif value.origin == "arg" and self._passed_plain(name, position):
                value = new_value(Kind.OTHER, name, origin="closure")  # a function, no model
            elif self._guessed(param, value) and (
                instance := self._passed_instance(name, position)
            ):  # every call passes an instance of one same-file class: whatever the body's
                # use suggested (``metric.update(...)`` reads like a dict's), it is that
                value = new_value(Kind.OTHER, instance, origin=INSTANCE_ORIGIN)
            torch_function = self._given_torch_function(name) if function is None else None
            if torch_function is not None:  # every construction passes this torch function
                value = function_value(torch_function)
            if ctx.role == "forward" and position == 0:
                self.scope.first_input = value
            if ctx.role == "forward" and not param.star:
                self.scope.forward_inputs.append((position, name, value))
            if value.kind is Kind.TENSOR and value.grad == 1 and self._given_parameter(name):
                value.grad = 2  # every construction passes a parameter (``self.locs``)
            if value.kind is Kind.TENSOR and ctx.node is not None:
                self._assume_grad(name, value)
                recorded = self._recorded(self.arg_grads, name, position)
                if recorded and max(recorded) == 0:
                    value.grad = 0  # every call seen so far passes a tensor without grad
                else:
                    value.grad = max([value.grad, *recorded])
                if any(self._recorded(self.arg_certain, name, position)):
                    value.grad_assumed = False  # some call passes a tensor known to need grad
                if any(self._recorded(self.arg_sure, name, position)):
                    value.sure = True  # every call seen so far passes a sure tensor
            elif value.kind is Kind.CONTAINER and ctx.node is not None and not value.elements:
                value.element_grad, certain = self._passed_grad(name, position)
                value.grad_assumed = not certain  # of a container: its elements' grad
            self._bind(name, [value])
        self._bind_passed_optimizers([p.name.value for p in params])

    def _guessed(self, param: cst.Param, value: Value) -> bool:
        """A parameter's value that its annotation does not settle: a tensor of unknown grad,
        or a container only by how the body uses it."""
        if value.origin == "arg":
            return True
        annotation = param.annotation.annotation if param.annotation else None
        text = self.module.code_for_node(annotation) if annotation is not None else ""
        return value.kind is Kind.CONTAINER and not container_annotation(text)

    def _calls_key(self) -> str:
        """The key the calls of the function being read record what they pass under
        (``Class.method`` for a method)."""
        ctx = self.scope.ctx
        return f"{ctx.cls.name}.{ctx.name}" if ctx.cls is not None else ctx.name

    def _recorded(
        self, table: Mapping[str, Mapping[int | str, _T]], name: str, position: int
    ) -> list[_T]:
        """What the calls so far recorded in ``table`` for the parameter, by its position
        and by its name."""
        passed = table.get(self._calls_key(), {})
        return [passed[k] for k in (position, name) if k in passed]

    def _passed_grad(self, name: str, position: int) -> tuple[int, bool]:
        """The strongest grad of the tensors the calls so far pass for the parameter (in the
        containers they pass there too), 1 where no call passes one; and whether some call
        passes one that requires grad by more than assumption (``arg_certain``)."""
        recorded = self._recorded(self.arg_grads, name, position)
        certain = any(self._recorded(self.arg_certain, name, position))
        return max(recorded) if recorded else 1, certain

    def _given_function(self, name: str) -> str | None:
        """In ``__init__``, a parameter stored on ``self`` that every construction passes
        the same same-file function for, by name or through the default
        (``radial_function=gaussian_radial_function``): that function."""
        names = {e.value if isinstance(e, cst.Name) else None for e in self._given_exprs(name)}
        found = names.pop() if len(names) == 1 else None
        return found if found in self.functions else None

    def _given_torch_function(self, name: str) -> str | None:
        """In ``__init__``, a parameter stored on ``self`` that every construction passes the
        same torch function for (``act=torch.tanh``, or the constructing class's own
        ``self.tf_out_act`` that its ``__init__`` sets to one): that function's name."""
        found = {self._torch_function_of(e) for e in self._given_exprs(name)}
        one = found.pop() if len(found) == 1 else None
        return one

    def _torch_function_of(self, expr: cst.BaseExpression, follow: bool = True) -> str | None:
        """The torch function ``expr`` names (``torch.tanh``, ``F.relu``), or, for
        ``self.attr``, the one every same-file ``__init__`` that sets ``attr`` sets it to."""
        attr = self_attribute(expr)
        if attr is not None:
            if not follow:
                return None
            values = {
                self._torch_function_of(right, follow=False)
                for cls in self.classes.values()
                if (init := cls.methods.get("__init__")) is not None
                for right in init_assignments(init, attr)
            }
            return values.pop() if len(values) == 1 else None
        qualified = self.imports.qualify(expr)
        return qualified if qualified in self.table.functions else None

    def _given_exprs(self, name: str) -> tuple[cst.BaseExpression, ...]:
        """In ``__init__``, what every construction of the class passes for the parameter
        ``name`` that ``__init__`` stores on ``self`` (``constructed.given_values``)."""
        ctx = self.scope.ctx
        cls = ctx.cls
        if cls is None or ctx.name != "__init__" or ctx.node is None:
            return ()
        attr = stored_params(ctx.node).get(name)
        return cls.constants.get(attr, ()) if attr is not None else ()

    def _given_parameter(self, name: str) -> bool:
        """In ``__init__``, a parameter stored on ``self`` that every construction passes an
        ``nn.Parameter`` for (its own, or the constructing class's ``self.locs`` that its
        ``__init__`` sets once to one): a tensor that requires grad."""
        return given_parameters(self._given_exprs(name), self.imports)

    def _given_module(self, name: str) -> Value | None:
        """In ``__init__``, a parameter every construction passes a module for, which
        ``__init__`` stores on ``self``: the same module as that attribute (``constructed``)."""
        ctx = self.scope.ctx
        cls = ctx.cls
        if cls is None or ctx.name != "__init__" or name not in cls.given:
            return None
        found = self._lookup(f"self.{cls.given[name]}")
        return found[0] if found and found[0].kind is Kind.MODULE else None

    def _param_value(self, param: cst.Param, index: int) -> Value:
        ctx = self.scope.ctx
        name = param.name.value
        annotation = param.annotation.annotation if param.annotation else None
        ann_text = self.module.code_for_node(annotation) if annotation is not None else ""
        if ctx.role == "fn_backward":
            return new_value(Kind.TENSOR, name, origin="grad_output", arg_name=name, grad=0)
        if ctx.role == "fn_forward":  # sure where annotated (``edge_label_index: Tensor``)
            if container_annotation(ann_text):  # ``pxy_grads: List[Optional[Tensor]]``
                return new_value(Kind.CONTAINER, name)
            sure = "Tensor" in ann_text
            return new_value(Kind.TENSOR, name, origin="fn_input", arg_name=name, sure=sure)
        if container_annotation(ann_text) or (
            ctx.node is not None and name in self._container_params(ctx.node)
        ):
            return self._annotated_tuple(name, annotation) or new_value(Kind.CONTAINER, name)
        if "Module" in ann_text or "Sequential" in ann_text:
            return new_value(Kind.MODULE, name, module=ModuleSpec(qualname=None, node=None))
        if other_annotation(ann_text):
            return new_value(Kind.OTHER, name)
        default = param.default
        if default is not None and not is_none(default):
            return new_value(Kind.OTHER, name)
        if "Tensor" not in ann_text and _SIZE_NAME.fullmatch(name):
            return new_value(Kind.OTHER, name)
        sure = "Tensor" in ann_text or ctx.role == "forward"
        grad = 2 if ctx.cls is not None and ctx.cls.is_module else 1
        if _INTEGER_NAME.fullmatch(name):
            grad = 0  # token ids, masks, labels, positions: integer or bool, never differentiated
        value = new_value(Kind.TENSOR, name, origin="arg", arg_name=name, sure=sure, grad=grad)
        value.grad_assumed = grad == 2
        return value

    def _annotated_tuple(self, name: str, annotation: cst.BaseExpression | None) -> Value | None:
        """``x_in: tuple[Tensor, Optional[Tensor], int]``: a tuple whose positions the
        annotation lists, each a tensor of unknown grad where it names one (a tensor or None
        where ``Optional``); None for any other annotation (``tuple[Tensor, ...]``, lists)."""
        parts = tuple_annotation(annotation)
        if parts is None:
            return None
        record = new_value(Kind.CONTAINER, name, literal_container=True)
        for position, part in enumerate(parts):
            text = self.module.code_for_node(part)
            if "Tensor" in text and not container_annotation(text):
                sure = "Optional" not in text and "None" not in text
                # known to be a tensor, not known to require grad (a scale beside floats,
                # diffusers' LTX ``rope_interpolation_scale``): what a caller gives decides
                element = new_value(
                    Kind.TENSOR, f"{name}[{position}]", origin="arg", arg_name=name, sure=sure
                )
                element.grad = 1
            else:
                element = new_value(Kind.OTHER, f"{name}[{position}]")
            record.elements.append(element)
            record.slots[element.id] = position
        return record

    def _not_tensor_params(self, func: cst.FunctionDef) -> frozenset[str]:
        """Parameters that hold no tensor: containers, and those annotated as something else
        (``n: int``), whose writes in a summary are no tensor's."""
        return self._container_params(func) | self._annotated(func, other_annotation)

    def _container_params(self, func: cst.FunctionDef) -> frozenset[str]:
        """Parameters that hold lists, tuples or dicts: by how the body uses them, or by
        their annotation (``state: MutableMapping``)."""
        found = self._containers_of.get(id(func))
        if found is None:
            used = container_params(func) if self._memo is None else self._memo.containers(func)
            annotated = self._annotated(func, container_annotation)
            found = self._containers_of[id(func)] = used | annotated
        return found

    def _annotated(self, func: cst.FunctionDef, says: Callable[[str], bool]) -> frozenset[str]:
        """The parameters of ``func`` whose annotation's text ``says`` holds of."""
        params = (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
        return frozenset(
            p.name.value
            for p in params
            if p.annotation is not None and says(self.module.code_for_node(p.annotation.annotation))
        )


def _callable(param: cst.Param) -> bool:
    """The parameter is annotated as a callable (``Callable``, ``Callable[..., Tensor]``)."""
    annotation = param.annotation.annotation if param.annotation is not None else None
    while isinstance(annotation, cst.Subscript):
        annotation = annotation.value
    if isinstance(annotation, cst.Attribute):
        annotation = annotation.attr
    return isinstance(annotation, cst.Name) and annotation.value == "Callable"

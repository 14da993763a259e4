"""Backward points (``backward()``, ``torch.autograd.grad``) and the tensors they are asked
to differentiate: where saved-then-overwritten tensors and rebound grad targets are found.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.classes import (
    literal_bool,
)
from inplace_lint.facts.ledger import overwritten
from inplace_lint.facts.model import Kind, SaveRecord, Value, Write, new_value
from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.state import AnalyzerBase
from inplace_lint.facts.syntax import (
    _arg,
    _retains,
)


class Backward(AnalyzerBase):
    """The backward room of the interpreter (see the module docstring)."""

    def _grad_call(self, node: cst.Call) -> list[Value]:
        before = self._next()
        outputs_arg = _arg(node, 0, "outputs")
        inputs_arg = _arg(node, 1, "inputs")
        outputs = self._eval(outputs_arg.value) if outputs_arg is not None else []
        if inputs_arg is not None:
            with self._meta:
                self._eval(inputs_arg.value)
        for arg in node.args:
            if arg is not outputs_arg and arg is not inputs_arg:
                self._eval(arg.value)
        if inputs_arg is not None:
            self._check_grad_targets(node, inputs_arg.value, before)
        retain = _retains(node)
        self._backward(self._flatten(outputs), node, retain, "`torch.autograd.grad`")
        return [self._gradients(node, inputs_arg, outputs)]

    def _gradients(self, node: cst.Call, inputs_arg: cst.Arg | None, outputs: list[Value]) -> Value:
        """The tuple ``torch.autograd.grad`` returns: one tensor per input. They require grad
        (and backward runs through the graph they came from) only with ``create_graph=True``."""
        create = _arg(node, 4, "create_graph")
        differentiable = (
            create is not None and literal_bool(create.value) is True and not self.scope.no_grad
        )
        inputs = inputs_arg.value if inputs_arg is not None else None
        count = len(inputs.elements) if isinstance(inputs, cst.List | cst.Tuple) else 1
        result = new_value(Kind.CONTAINER)
        for _ in range(count):
            gradient = self._unknown(inputs=outputs if differentiable else (), sure=True)
            gradient.grad = 2 if differentiable else 0
            result.elements.append(gradient)
        return result

    def _backward_call(
        self, node: cst.Call, receiver: list[Value], args: list[tuple[str, cst.Arg, list[Value]]]
    ) -> None:
        self._backward_point(node, receiver, args)

    def _backward_point(
        self, node: cst.Call, tensors: list[Value], args: list[tuple[str, cst.Arg, list[Value]]]
    ) -> None:
        for keyword, arg, _ in args:
            if keyword == "inputs":
                self._check_grad_targets(node, arg.value, None)
        self._backward(self._flatten(tensors), node, _retains(node), "`backward()`")

    def _grad_targets(self, inputs: cst.BaseExpression) -> list[tuple[str, Value, int]]:
        """(name, value, binding seq) for each tensor an autograd call differentiates against."""
        scope = self.scope
        found: list[tuple[str, Value, int]] = []
        nodes = (
            [e.value for e in inputs.elements]
            if isinstance(inputs, cst.List | cst.Tuple)
            else [inputs]
        )
        for node in nodes:
            name = dotted_name(node)
            if name is None:
                continue
            binding = scope.bindings.get(name, 0)
            for value in scope.env.get(name, []):
                if value.kind is Kind.CONTAINER:
                    found += [(name, e, binding) for e in value.elements if e.is_tensor]
                elif value.is_tensor:
                    found.append((name, value, binding))
        return found

    def _check_grad_targets(
        self, node: cst.Call, inputs: cst.BaseExpression, since: int | None
    ) -> None:
        scope = self.scope
        for name, value, binding in self._grad_targets(inputs):
            if value.leaf:
                continue
            writes = [w for _, w in value.group.writes if not w.no_grad and w.via_call is None]
            inside = [w for w in writes if since is not None and w.seq > since]
            if inside:
                how = "is overwritten in place inside this call"
                self.facts.grad_targets.append(
                    ev.GradTarget(node, scope.stmt, name, how, node, inside[0])
                )
                continue
            found = value.grad_hazard or self._stale_target(name, value, binding)
            if found is not None:
                write, how = found
                self.facts.grad_targets.append(
                    ev.GradTarget(write.node, write.stmt, name, how, node, write)
                )

    def _stale_target(self, name: str, value: Value, binding: int) -> tuple[Write, str] | None:
        """The in-place write that makes differentiating against ``name`` wrong, if any: the
        name was bound to an in-place result, or its tensor was overwritten in place after
        it entered the graph."""
        scope = self.scope
        if name in scope.bound_inplace:
            return scope.bound_inplace[name], "was bound to the result of an in-place op"
        for _, write in value.group.writes:
            if write.no_grad or write.via_call is not None or write.seq <= binding:
                continue
            used_before = value.first_use is not None and write.seq > value.first_use
            other_name = write.name is not None and write.name != name
            if value.origin == "arg" or write.elsewhere or used_before or other_name:
                return write, "was overwritten in place after it entered the graph"
        return None

    def _note_returned_targets(self, returned: cst.BaseExpression) -> None:
        """``return logits, feats`` from a forward after ``act = F.relu_(feats)``: a caller
        that differentiates against ``feats`` gets the gradient of the wrong tensor."""
        scope = self.scope
        cls = scope.ctx.cls
        if scope.ctx.role != "forward" or cls is None or not isinstance(returned, cst.Tuple):
            return
        hazards: dict[int, tuple[Write, str]] = {}
        for position, element in enumerate(returned.elements):
            if not isinstance(element.value, cst.Name):
                continue
            name = element.value.value
            binding = scope.bindings.get(name, 0)
            for value in scope.env.get(name, []):
                found = (
                    None
                    if value.leaf or not value.is_tensor
                    else (self._stale_target(name, value, binding))
                )
                if found is not None:
                    write, how = found
                    hazards[position] = (write, f"{how} in `{cls.name}.forward`")
                    break
        if hazards:
            self.returned_targets[cls.name] = (len(returned.elements), hazards)

    def _backward(
        self, values: list[Value], node: cst.CSTNode | None, retain: bool, what: str
    ) -> None:
        scope = self.scope
        if node is not None:
            scope.backward_seen = True
            if retain and self.facts.retained_at is None:
                self.facts.retained_at = node
        records: set[SaveRecord] = set()
        for value in values:
            records |= value.hist
        self._note_method_backward(records, node, retain)
        self._backward_records(records, node, retain, what)

    def _backward_records(
        self, records: set[SaveRecord], node: cst.CSTNode | None, retain: bool, what: str
    ) -> None:
        """A backward point over a graph that depends on ``records``."""
        scope = self.scope
        for write, record in overwritten(records, scope.consumed):
            if record.id < scope.start_id and write.seq < scope.start_seq:
                # a graph this function was handed, and a write another function's analysis
                # made: their order is the calls' (replayed where one method calls another)
                continue
            if (
                node is None
                and write.update
                and (record.id in scope.differentiated or write.callee)
            ):
                # the training step's own backward came first, then the update (or a helper
                # made the update): only a caller differentiating the same graph again would
                # meet it (issue 18)
                continue
            if (
                node is None
                and write.name
                and self._copies_itself(write.name)
                and self._argument_storage(record)
            ):
                # ``if self.training: spec = spec.clone()``: the function writes its input
                # only on the arm where it decided no caller differentiates it (what it
                # saves of its own copy is another matter)
                continue
            self.facts.saved_overwrites.append(ev.SavedOverwrite(write, record, node, what))
        if node is not None:
            scope.differentiated |= {r.id for r in records}
        if not retain and node is not None:
            scope.consumed |= {r.id for r in records}

    def _argument_storage(self, record: SaveRecord) -> bool:
        """``record`` saved a tensor of an argument's storage."""
        return any(
            v.origin == "arg" and v.group is record.group
            for values in self.scope.env.values()
            for v in values
        )

    def _note_method_backward(
        self, records: set[SaveRecord], node: cst.CSTNode | None, retain: bool
    ) -> None:
        """A method's backward over graphs it was handed (saves made before it ran): what a
        ``self.method()`` call replays in its caller (``backward_G`` after ``forward``)."""
        scope = self.scope
        cls = scope.ctx.cls
        if node is None or cls is None or scope.ctx.node is None or self._inlining:
            return
        handed = frozenset(r for r in records if r.id < scope.start_id)
        if handed:
            key = (cls.name, scope.ctx.name)
            self.method_backwards.setdefault(key, []).append((handed, retain))

    def _replay_method_backwards(self, class_name: str, method: str, node: cst.Call) -> None:
        """``self.backward_G()``: its backward points over the graphs it was handed, here."""
        for records, retain in self.method_backwards.get((class_name, method), []):
            self.scope.backward_seen = True
            self._note_method_backward(set(records), node, retain)  # for this method's callers
            self._backward_records(set(records), node, retain, f"`self.{method}()`")


def wrapped_backward(
    method: str, receiver: list[Value], args: list[tuple[str, cst.Arg, list[Value]]]
) -> list[Value] | None:
    """The tensors a training framework's backward wrapper differentiates: a ``backward``
    called on what is surely no tensor, or a ``manual_backward``, with a tensor first
    argument runs ``loss.backward()`` for it (Lightning's ``manual_backward``, Accelerate's,
    Fabric's and DeepSpeed's ``backward(loss)``); None for any other call. An unknown
    receiver may still be a tensor (``out.backward(grad)``): then both are roots, which
    changes nothing for the gradient argument, a tensor no graph kept."""
    if not args or args[0][0] or method not in ("backward", "manual_backward"):
        return None
    passed = [v for v in args[0][2] if v.kind is Kind.TENSOR]
    if not passed or any(v.kind is Kind.TENSOR and v.sure for v in receiver):
        return None
    if method == "manual_backward":
        return passed
    return [*receiver, *passed]

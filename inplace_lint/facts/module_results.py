"""What a same-file module's tuple-returning ``forward`` gives its caller, element by element.

The record's elements carry what the forward did to compute them: the saves of the module
parameters each depends on, the grad-target hazards the forward left, and, where the forward
is interpreted with this call's values (``inline``), the saves its body made of each value,
an op's save of its own output included (``return attn_h, attn`` after ``attn =
F.softmax(align)``: writing ``attn`` in the caller breaks the softmax's backward). Limits: a
forward that cannot be interpreted at this call (too large, ``*args``) gives only its
parameters' saves.
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from inplace_lint.facts.forward_returns import returned_tuple_size
from inplace_lint.facts.model import FLOW, Kind, Value, new_value, next_id
from inplace_lint.facts.state import AnalyzerBase


class ModuleResults(AnalyzerBase):
    """The records same-file modules' tuple-returning forwards hand back."""

    def _forward_record(
        self,
        class_name: str,
        owner: Value,
        produced: list[Value],
        args: list[tuple[str, cst.Arg, list[Value]]],
        node: cst.Call,
    ) -> Value:
        """A same-file module's tuple-returning forward, called: the opaque record, each
        element with the saves its body made computing it from this call's values
        (``inline``: ``q_pi`` through ``main.q``, not ``main.policy``), where known; an
        element an op of the body saved as its output is saved at this call too
        (``return attn_h, attn`` after ``attn = F.softmax(align)``)."""
        record = self._returned_record(class_name, owner, produced)
        inlined = self._inline_forward(owner, class_name, args)
        computed = inlined[0] if inlined and len(inlined) == 1 else None
        if (
            computed is None
            or computed.kind is not Kind.CONTAINER
            or len(computed.elements) != len(record.elements)
        ):
            # not computed from this call's values: each element may depend on every input,
            # so a backward through it reaches the caller's graph (a discriminator's score
            # of a generator's output)
            given = {r for _, _, vs in args for v in vs for r in v.hist if r.role != FLOW}
            for element in record.elements:
                element.hist |= given
            self._kept_positions(record, class_name, node)
            return record
        for element, value in zip(record.elements, computed.elements, strict=True):
            saves = {r for r in value.hist if r.role != FLOW}
            if saves:
                element.hist = set(saves)
            if value.kind is Kind.TENSOR:
                element.grad = value.grad  # as computed (an index or a mask needs none)
                # the very tensor the forward made: surely a tensor where it is one there,
                # and one of a multi-view op's views where it is one (``mean, logvar =
                # x.chunk(2)`` returned: torch refuses the caller's in-place write to it)
                element.sure = element.sure or value.sure
                element.multi_view = value.multi_view
                self._kept_output(value, element, class_name, node)
        for key, values in computed.items.items():  # ``return {"logits": logits}``: by key
            record.items[key] = [
                element
                for element, value in zip(record.elements, computed.elements, strict=True)
                if any(value is v for v in values)
            ]
        return record

    def _kept_output(self, value: Value, element: Value, class_name: str, node: cst.Call) -> None:
        """``element`` stands for ``value``, which an op of ``class_name``'s forward saved as
        its output on every way through the body (a save inside an ``if`` arm of the body
        does not count): the caller's copy is saved by that op too."""
        if self.scope.no_grad or value.grad < 2:
            return
        here = tuple(self._path)
        ops = [
            r.op
            for r in value.hist
            if r.role == "result" and r.group is value.group and r.path == here
        ]
        if ops:
            element.sure = element.sure or value.sure  # computed: a tensor for certain
            self._save(element, f"{ops[0]} in {class_name}.forward", node, "result", [element])

    def _returned_record(self, class_name: str, owner: Value, produced: list[Value]) -> Value:
        """What a same-file module's tuple-returning forward gives its caller: an opaque
        record. Its elements depend on the module's parameters (an optimizer step before
        their backward is still IPL001) and carry the grad-target hazards the forward left."""
        record = new_value(Kind.CONTAINER)
        uses = {r for v in produced for r in v.hist if r.role == "parameters"}
        known = self.returned_targets.get(class_name)
        size, hazards = known if known is not None else (1, {})
        # which positions the forward computed through its parameters, if analysed already
        shape = self.returned_saves.get((class_name, "forward"))
        if known is None and shape is not None and len(shape) > 1:
            size = len(shape)
        elif known is None and shape is None:  # forward not analysed yet: its text says
            size = returned_tuple_size(self._forward_of(class_name)) or size
        precise = self._forward_saves(class_name, owner, size)
        grad = self._grad_of(produced, default=1)  # a module with parameters: each needs grad
        for position in range(size):
            element = self._unknown(sure=known is not None)
            element.grad = grad
            if precise[position]:  # the submodules this element was computed through
                element.hist |= precise[position]
            elif shape is None or len(shape) != size or shape[position]:
                # each element its own graph: differentiating ``q`` does not free ``q_pi``'s
                element.hist |= {dataclasses.replace(r, id=next_id()) for r in uses}
            element.grad_hazard = hazards.get(position)
            record.elements.append(element)
        return record

    def _forward_of(self, class_name: str) -> cst.FunctionDef | None:
        cls = self.classes.get(class_name)
        return cls.methods.get("forward") if cls is not None else None

    def _kept_positions(self, record: Value, class_name: str, node: cst.Call) -> None:
        """The forward, analysed on its own, saved as its output what it returns at some
        positions: the caller's elements there are saved by that op at this call."""
        ops = self.method_saves_positions.get((class_name, "forward"))
        if ops is None or len(ops) != len(record.elements) or self.scope.no_grad:
            return
        for element, op in zip(record.elements, ops, strict=True):
            if op is not None and element.grad == 2:
                element.sure = True
                self._save(element, f"{op} in {class_name}.forward", node, "result", [element])

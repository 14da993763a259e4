"""What a custom ``autograd.Function`` saves in ``forward``, and which of it is its own.

A ``backward`` that writes a saved tensor in place changes it for everyone who holds it:
the caller, when ``forward`` saved one of its inputs or the output it returned. A tensor
``forward`` made for itself and gave nobody (Megatron's vocab-parallel cross-entropy keeps
``exp_logits`` and turns it into the input gradient) is held by the graph alone, so writing
it is only wrong when backward runs again over a retained graph (the rule reports it where
the file retains one).

So each ``ctx.save_for_backward(...)`` position and each ``ctx.name = tensor`` is noted
while ``forward`` is interpreted; when it ends, a saved value is the Function's own when it
is a tensor, not an input or a view of one (its storage group is not an input's), not a
possible alias of one (``x.float()``), and not in what ``forward`` returns. ``backward``
then reads ``ctx.saved_tensors`` position by position. Limits: one ``forward`` per class;
a tensor ``forward`` also stores into a list argument (``grads[0] = g``: a Function's inputs
are not known to be lists) still counts as its own; ``ctx.name`` is followed only for a
value known to be a tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.model import OWNED, Kind, Value, new_value
from inplace_lint.facts.state import AnalyzerBase, _Scope


@dataclass
class SavedByForward:
    """One Function's saves: by position, and by ``ctx`` attribute."""

    positions: list[list[Value]] = field(default_factory=list)
    attributes: dict[str, list[Value]] = field(default_factory=dict)
    owned_positions: frozenset[int] = frozenset()
    owned_attributes: frozenset[str] = frozenset()
    known: bool = False  # forward was interpreted to its end


class FunctionSaves(AnalyzerBase):
    """The room that notes a Function's saves in ``forward`` and hands them to ``backward``."""

    def _saved_by(self) -> SavedByForward | None:
        cls = self.scope.ctx.cls
        if cls is None or not cls.is_function:
            return None
        return self.function_saves.setdefault(cls.name, SavedByForward())

    def _note_save_for_backward(self, args: list[tuple[str, cst.Arg, list[Value]]]) -> None:
        """``ctx.save_for_backward(a, b)`` in ``forward``."""
        saved = self._saved_by()
        if saved is None:
            return
        if any(arg.star for _, arg, _ in args):
            saved.positions = []  # positions unknown: backward sees plain saved tensors
            return
        saved.positions = [list(values) for _, _, values in args]

    def _note_ctx_attribute(self, target: cst.Attribute, values: list[Value]) -> None:
        """``ctx.softmax = exp_logits`` in ``forward``."""
        saved = self._saved_by()
        if saved is not None and isinstance(target.value, cst.Name):
            saved.attributes[target.attr.value] = list(values)

    def _settle_function_saves(self, scope: _Scope, inputs: list[Value]) -> None:
        """At the end of ``forward``: which saved values are the Function's own (``inputs``:
        the values its parameters were bound to)."""
        saved = self._saved_by()
        if saved is None:
            return
        returned = {
            v.group.id for _, values in scope.returned_at for v in values if v.kind is Kind.TENSOR
        }
        excluded = {v.group.id for v in inputs} | returned

        def own(values: list[Value]) -> bool:
            tensors = [v for v in values if v.kind is Kind.TENSOR]  # None on another arm
            return bool(tensors) and all(
                v.origin != "fn_input" and v.soft_of is None and v.group.id not in excluded
                for v in tensors
            )

        self._dirty_not_returned(scope, returned)
        saved.owned_positions = frozenset(i for i, vs in enumerate(saved.positions) if own(vs))
        saved.owned_attributes = frozenset(a for a, vs in saved.attributes.items() if own(vs))
        saved.known = True

    def _dirty_not_returned(self, scope: _Scope, returned: set[int]) -> None:
        """An input ``forward`` wrote and marked dirty must be among its outputs: torch
        refuses the call otherwise ('Some elements marked as dirty during the forward method
        were not returned as output')."""
        if not scope.returned_at:
            return
        for write, name, value in scope.dirty_writes:
            if value.group.id not in returned:
                self.facts.function_writes.append(ev.FunctionWrite(write, "dirty input", name))

    def _saved_in_backward(self, attr: str) -> Value | None:
        """``ctx.saved_tensors`` (or ``ctx.attr``) in ``backward``, position by position, when
        ``forward`` was interpreted; None to keep the opaque saved container."""
        cls = self.scope.ctx.cls
        saved = self.function_saves.get(cls.name) if cls is not None else None
        if saved is None or not saved.known:
            return None
        if attr in ("saved_tensors", "saved_variables"):
            container = new_value(Kind.CONTAINER, literal_container=True, origin="saved")
            for position in range(len(saved.positions)):
                owned = position in saved.owned_positions
                container.elements.append(saved_tensor(owned))
            return container
        held = saved.attributes.get(attr, [])
        # a tensor, or None on some arm (``grads = zeros_like(acts) if needed else None``):
        # a write through it reaches the tensor
        tensors = [v for v in held if v.kind is Kind.TENSOR and v.sure]
        if tensors and all(v.kind in (Kind.TENSOR, Kind.OTHER) for v in held):
            return saved_tensor(owned=attr in saved.owned_attributes)
        return None


def saved_tensor(owned: bool = False) -> Value:
    """A tensor ``backward`` reads from ``ctx``: the Function's own, or shared."""
    return new_value(Kind.TENSOR, grad=0, sure=True, origin=OWNED if owned else "saved")

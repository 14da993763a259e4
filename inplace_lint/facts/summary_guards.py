"""The tests a summarised write sits under, and whether a call lets it happen.

``if inplace:`` / ``if not inplace:`` on a parameter (a flag the call sets), ``if mask is not
None:`` (the call may pass a value), and ``if not self.inplace:`` (an owner's opt-in mode,
which a call cannot see). Split from ``summaries.py``, which records the guards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from inplace_lint.facts.classes import literal_bool
from inplace_lint.facts.conditions import _negated
from inplace_lint.facts.heuristics import _mentions_inplace
from inplace_lint.facts.model import Value
from inplace_lint.facts.names import ImportTable
from inplace_lint.facts.op_extras import _NO_GRAD
from inplace_lint.facts.syntax import is_none
from inplace_lint.facts.walk import Walker, walk

if TYPE_CHECKING:
    from inplace_lint.facts.summaries import Mutation


def opted_out(test: cst.BaseExpression) -> bool:
    """``not self.inplace``: a test that holds when an object's ``inplace`` flag is off."""
    inner = _negated(test)
    return isinstance(inner, cst.Attribute) and _mentions_inplace(inner)


def mark_guarded(
    node: cst.CSTNode, guard: tuple[str, bool, bool], guarded: dict[int, tuple[str, bool, bool]]
) -> None:
    """Every node under ``node`` sits under ``guard`` (the first test to mark it counts)."""
    for inner in walk(node):
        guarded.setdefault(id(inner), guard)


def guard_holds(
    keywords: dict[str, tuple[cst.Arg, list[Value]]],
    positional: list[tuple[cst.Arg, list[Value]]],
    mutation: Mutation,
) -> bool:
    """The call gives the mutation's guard parameter the value its write needs: a literal
    bool passed, or the parameter's literal default when none is passed. For a test of
    ``None``, only a ``None`` passed (or a ``None`` default) decides; any other argument may
    be either, so the write may happen."""
    passed = keywords.get(mutation.guard or "")
    if passed is None and 0 <= mutation.guard_index < len(positional):
        passed = positional[mutation.guard_index]
    if mutation.guard_none:
        given_none = is_none(passed[0].value) if passed is not None else mutation.guard_default
        return not given_none or not mutation.guard_value
    value = literal_bool(passed[0].value) if passed is not None else mutation.guard_default
    return value is mutation.guard_value


def grad_turned_off(node: cst.CSTNode) -> str | None:
    """The name whose grad ``node`` turns off for good: ``out.requires_grad = False``,
    ``out.requires_grad_(False)``, ``out.detach_()`` (a parameter written after that in the
    same function is no leaf that requires grad: DistilBERT's fixed sinusoidal table)."""
    if isinstance(node, cst.Assign) and literal_bool(node.value) is False:
        for target in node.targets:
            attr = target.target
            if (
                isinstance(attr, cst.Attribute)
                and attr.attr.value == "requires_grad"
                and isinstance(attr.value, cst.Name)
            ):
                return attr.value.value
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        receiver, method = node.func.value, node.func.attr.value
        off = method == "detach_" or (
            method == "requires_grad_"
            and len(node.args) == 1
            and literal_bool(node.args[0].value) is False
        )
        if off and isinstance(receiver, cst.Name):
            return receiver.value
    return None


class GradModeWalker(Walker):
    """A walker that knows where a function turns grad off for the writes it finds: inside
    ``with torch.no_grad():`` (``inference_mode``), and for a parameter after an
    unconditional ``grad_turned_off`` (``arms``: the branches being walked, set by the
    subclass)."""

    imports: ImportTable
    arms: list[object]

    def _start_grad_mode(self) -> None:
        self.no_grad_depth = 0
        #: parameters whose grad the function turned off before (``out.requires_grad = False``)
        self.grad_off: set[str] = set()

    def _note_grad_off(self, node: cst.CSTNode, alias_of: dict[str, str]) -> None:
        name = grad_turned_off(node)
        if name is not None and not self.arms:  # unconditionally, from here on
            self.grad_off.add(alias_of.get(name, name))

    def _turns_grad_off(self, node: cst.With) -> bool:
        return any(
            isinstance(item.item, cst.Call)
            and (self.imports.qualify(item.item.func) or "") in _NO_GRAD
            for item in node.items
        )

    def visit_With(self, node: cst.With) -> None:
        if self._turns_grad_off(node):
            self.no_grad_depth += 1

    def leave_With(self, original_node: cst.With) -> None:
        if self._turns_grad_off(original_node):
            self.no_grad_depth -= 1

    def grad_is_off(self, name: str | None) -> bool:
        """A write through ``name`` here runs with grad off (or on a tensor with none)."""
        return self.no_grad_depth > 0 or name in self.grad_off

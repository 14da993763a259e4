"""The tests a summarised write sits under, and whether a call lets it happen.

``if inplace:`` / ``if not inplace:`` on a parameter (a flag the call sets), ``if mask is not
None:`` (the call may pass a value), and ``if not self.inplace:`` (an owner's opt-in mode,
which a call cannot see). Split from ``summaries.py``, which records the guards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from inplace_lint.facts.classes import literal_bool
from inplace_lint.facts.conditions import _negated, plain_arms
from inplace_lint.facts.heuristics import _mentions_inplace
from inplace_lint.facts.model import Kind, Value
from inplace_lint.facts.names import ImportTable
from inplace_lint.facts.op_extras import _NO_GRAD
from inplace_lint.facts.syntax import is_none
from inplace_lint.facts.walk import Walker, walk

if TYPE_CHECKING:
    from inplace_lint.facts.summaries import Mutation


#: marks, among the names an arm rebinds, a local alias bound to something else there; with
#: ``[key]`` after the name, an entry of a mapping parameter the function replaced there
_UNALIASED = "\0"


@dataclass
class _Arms:
    """One branch or loop body being walked (``summaries``): the names rebound in the arm
    being walked, in the arms done, and the ``elif`` that continues the branch."""

    current: set[str] = field(default_factory=set)
    done: list[set[str]] = field(default_factory=list)
    orelse: cst.CSTNode | None = None
    #: names the test says hold no tensor in the arms after the first (``type_tests``)
    otherwise: frozenset[str] = frozenset()
    #: local aliases of parameters made in the arm being walked: none in the next arm
    made: set[str] = field(default_factory=set)

    def next_arm(self) -> None:
        self.done.append(self.current)
        self.current = set(self.otherwise) | {_UNALIASED + name for name in self.made}
        self.made = set()


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
    ``None``, a ``None`` passed (or a ``None`` default) decides, and so does an argument known
    to be an object (a tensor, a module) for a write that needs ``None``; any other argument
    may be either, so the write may happen."""
    passed = keywords.get(mutation.guard or "")
    if passed is None and 0 <= mutation.guard_index < len(positional):
        passed = positional[mutation.guard_index]
    if mutation.guard_none:
        if not mutation.guard_value and passed is not None and _never_none(passed[1]):
            return False  # ``spk_emb=g`` with ``g`` a tensor: the ``is None`` path is not taken
        given_none = is_none(passed[0].value) if passed is not None else mutation.guard_default
        return not given_none or not mutation.guard_value
    value = literal_bool(passed[0].value) if passed is not None else mutation.guard_default
    return value is mutation.guard_value


def _never_none(values: list[Value]) -> bool:
    """Every value the argument may hold is an object, never ``None``: a tensor known to be
    one, a module, an optimizer, a container."""
    return bool(values) and all(
        v.sure if v.kind is Kind.TENSOR else v.kind is not Kind.OTHER for v in values
    )


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
        #: nodes in an arm a ``requires_grad`` test chose for tensors without grad
        self.plain_nodes: set[int] = set()
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

    def _note_grad_test(self, node: cst.If) -> None:
        """``if x.requires_grad: x = x + b else: x += b``: the arm the test keeps for
        tensors without grad writes in place on purpose (a caller's state updated in
        inference), so its writes are no summarised mutation."""
        body, orelse = plain_arms(node.test)
        for names, arm in ((body, node.body), (orelse, node.orelse)):
            if names and arm is not None:
                self.plain_nodes.update(id(inner) for inner in walk(arm))

    def visit_With(self, node: cst.With) -> None:
        if self._turns_grad_off(node):
            self.no_grad_depth += 1

    def leave_With(self, original_node: cst.With) -> None:
        if self._turns_grad_off(original_node):
            self.no_grad_depth -= 1

    def grad_is_off(self, name: str | None) -> bool:
        """A write through ``name`` here runs with grad off (or on a tensor with none)."""
        return self.no_grad_depth > 0 or name in self.grad_off

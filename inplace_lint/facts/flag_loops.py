"""In-place flags set after construction by a loop over a module's submodules.

``for m in self.modules(): if isinstance(m, (nn.ReLU, nn.Dropout)): m.inplace = True`` in a
class's ``__init__`` turns every matching module that the class built into its in-place form
(BDRAR, round 15): a ReLU followed by an in-place Dropout in one of its Sequentials then
overwrites the output the ReLU saved. This pass finds such loops; the Sequentials built in the
same ``__init__`` get the matching members in their in-place form, and a finding on such a
member is placed at the flag's assignment, the line that made it in place.

Limits: only loops over ``self.modules()`` / ``self.children()`` in ``__init__``, with the
flag set to the literal ``True`` on the loop variable, filtered by ``isinstance`` tests on it
(or not filtered); Sequentials built in other methods, or modules held in plain attributes,
keep the form they were built with.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from inplace_lint.facts.model import ModuleSpec
from inplace_lint.facts.names import ImportTable, isinstance_test
from inplace_lint.facts.ops import OpTable
from inplace_lint.facts.walk import nested_scope, walk


@dataclass(frozen=True)
class InplaceFlip:
    """A loop that sets ``inplace = True`` on the submodules of the given types (any type
    with an ``inplace`` parameter when ``types`` is None), at ``node``."""

    types: frozenset[str] | None
    node: cst.CSTNode


def find_flip(init: cst.FunctionDef, imports: ImportTable) -> InplaceFlip | None:
    """The first ``for m in self.modules(): ... m.inplace = True`` loop of ``init``."""
    for loop in walk(init.body, skip=nested_scope):
        if not (isinstance(loop, cst.For) and isinstance(loop.target, cst.Name)):
            continue
        if not _over_submodules(loop.iter):
            continue
        name = loop.target.value
        types: set[str] = set()
        filtered = False
        for node in walk(loop.body, skip=nested_scope):
            test = isinstance_test(node) if isinstance(node, cst.Call) else None
            if test is not None and test[0] == name:
                filtered = True
                types |= _qualified_types(test[1], imports)
            elif isinstance(node, cst.Assign) and _sets_inplace(node, name):
                return InplaceFlip(frozenset(types) if filtered else None, node)
    return None


def flipped(spec: ModuleSpec, flip: InplaceFlip, table: OpTable) -> ModuleSpec:
    """``spec`` with the members ``flip`` reaches in their in-place form."""
    if spec.elements is not None:
        return replace(spec, elements=tuple(flipped(e, flip, table) for e in spec.elements))
    info = table.modules.get(spec.qualname or "")
    if info is None or info.inplace_index is None or spec.inplace:
        return spec
    if flip.types is not None and spec.qualname not in flip.types:
        return spec
    return replace(
        spec,
        inplace=True,
        inplace_at=flip.node,
        saves_input=info.saves_input,
        saves_result=info.saves_result,
    )


def _over_submodules(iterable: cst.BaseExpression) -> bool:
    return (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Attribute)
        and isinstance(iterable.func.value, cst.Name)
        and iterable.func.value.value == "self"
        and iterable.func.attr.value in ("modules", "children")
    )


def _qualified_types(node: cst.BaseExpression, imports: ImportTable) -> set[str]:
    if isinstance(node, cst.Tuple):
        return {q for e in node.elements for q in _qualified_types(e.value, imports)}
    qualified = imports.qualify(node)
    return {qualified} if qualified else set()


def _sets_inplace(assign: cst.Assign, name: str) -> bool:
    target = assign.targets[0].target if len(assign.targets) == 1 else None
    return (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == name
        and target.attr.value == "inplace"
        and isinstance(assign.value, cst.Name)
        and assign.value.value == "True"
    )

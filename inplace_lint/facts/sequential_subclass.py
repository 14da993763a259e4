"""A user class derived from ``nn.Sequential`` that keeps torch's ``forward``.

``class DepthwiseSeparableConv(nn.Sequential)`` whose ``__init__`` ends in
``super().__init__(*modules)`` runs its members in order like any Sequential: the
members are the arguments of that call (through a literal list bound once in ``__init__``),
with ``__init__``'s parameter defaults for names such as ``norm_layer=ABN``.

Limits: only the first ``super().__init__`` / ``nn.Sequential.__init__(self, ...)`` call is
read; a class that defines its own ``forward`` is not a plain Sequential and gets nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.walk import own_nodes

SEQUENTIAL = "torch.nn.Sequential"


@dataclass(frozen=True)
class SequentialInit:
    """What builds the members: the call with its arguments, and the names it may use."""

    call: cst.Call
    lists: dict[str, tuple[cst.BaseExpression, ...]]
    defaults: dict[str, cst.BaseExpression]


def sequential_init(
    bases: tuple[str, ...], methods: dict[str, cst.FunctionDef]
) -> SequentialInit | None:
    """The ``super().__init__(...)`` call of a direct ``nn.Sequential`` subclass with no
    ``forward`` of its own, or None."""
    if SEQUENTIAL not in bases or "forward" in methods:
        return None
    init = methods.get("__init__")
    if init is None:
        return None
    call = next((n for n in own_nodes(init) if _is_super_init(n)), None)
    if call is None:
        return None
    args = [a for a in call.args if a.keyword is None]
    assert isinstance(call.func, cst.Attribute)
    if not isinstance(call.func.value, cst.Call):
        args = args[1:]  # ``nn.Sequential.__init__(self, *modules)``
    # imported here: ``fixed_lists`` reaches ``classes``, which imports this module
    from inplace_lint.facts.fixed_lists import fixed_lists

    defaults = {
        p.name.value: p.default
        for p in (*init.params.params, *init.params.kwonly_params)
        if p.default is not None
    }
    return SequentialInit(call.with_changes(args=args), fixed_lists(init), defaults)


def _is_super_init(node: cst.CSTNode) -> bool:
    if type(node) is not cst.Call or not isinstance(node.func, cst.Attribute):
        return False
    if node.func.attr.value != "__init__":
        return False
    owner = node.func.value
    if isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name):
        return owner.func.value == "super"
    name = dotted_name(owner)
    return name is not None and name.endswith("Sequential")

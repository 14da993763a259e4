"""Which parameters a function differentiates against, for the rebound-grad check at its
callers (IPL006): ``jacobian(y, h)`` asks for the gradient of the caller's ``h``.

Limits: only ``torch.autograd.grad(outputs, inputs)`` and ``t.backward(inputs=...)`` with the
inputs written as names or a list/tuple of names are read."""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.classes import literal_bool
from inplace_lint.facts.names import ImportTable
from inplace_lint.facts.walk import own_nodes


def grad_target_params(func: cst.FunctionDef, imports: ImportTable) -> dict[str, int]:
    """Parameters ``func`` differentiates against (``autograd.grad(y, wrt)``,
    ``y.backward(inputs=[wrt])``), with their positions (not counting ``self``)."""
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    found: set[str] = set()
    made_leaves: set[str] = set()
    for node in own_nodes(func):
        if type(node) is not cst.Call:
            continue
        made = _made_leaf(node)
        if made is not None:
            made_leaves.add(made)
            continue
        inputs: cst.BaseExpression | None = None
        keyword = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
            inputs = keyword.get("inputs")
        elif imports.qualify(node.func) == "torch.autograd.grad":
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            inputs = keyword.get("inputs", positional[1] if len(positional) > 1 else None)
        if inputs is None:
            continue
        names = (
            [e.value for e in inputs.elements]
            if isinstance(inputs, cst.List | cst.Tuple)
            else [inputs]
        )
        found.update(n.value for n in names if isinstance(n, cst.Name))
    # ``pos.requires_grad_(True)`` first: the gradient is for the leaf the function makes,
    # not for whatever the caller did to that tensor before the call
    found -= made_leaves
    return {name: params.index(name) for name in found if name in params}


def _made_leaf(call: cst.Call) -> str | None:
    """``name.requires_grad_()`` / ``name.requires_grad_(True)``: the name."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_"):
        return None
    if call.args and literal_bool(call.args[0].value) is not True:
        return None
    return func.value.value if isinstance(func.value, cst.Name) else None

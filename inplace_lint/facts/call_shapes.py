"""Small facts about one call: its shape in the syntax, and what its arguments hold. Shared by
the calls room (``calls.py``); each reads only the call or the values given."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from inplace_lint.facts.model import Kind, Value
from inplace_lint.facts.names import dotted_name

Args = list[tuple[str, cst.Arg, list[Value]]]


def sure_tensor_passed(args: Args) -> bool:
    """Whether a call passes a value known to be a tensor."""
    return any(v.kind is Kind.TENSOR and v.sure for _, _, vs in args for v in vs)


def builds_over_parameters(args: Args) -> bool:
    """Whether a call's first positional argument is a module's parameters
    (``make(model.parameters(), lr=0.1)``), as an optimizer's construction passes them."""
    first = args[0] if args else None
    return first is not None and not first[0] and any(v.kind is Kind.PARAM_ITER for v in first[2])


def element_at(values: list[Value], index: int) -> list[Value]:
    """The element at a constant position of the list or tuple displays among ``values``
    (``parse_output([mel, post, gate], lengths)``); none for containers of unknown order."""
    found: list[Value] = []
    for value in values:
        if (
            value.kind is Kind.CONTAINER
            and value.literal_container
            and -len(value.elements) <= index < len(value.elements)
        ):
            found.append(value.elements[index])
    return found


def lambda_map(node: cst.Call) -> bool:
    """``map(lambda t: ..., xs)``: one single-parameter lambda over one iterable."""
    if len(node.args) != 2 or any(a.keyword or a.star for a in node.args):
        return False
    lam = node.args[0].value
    if not isinstance(lam, cst.Lambda):
        return False
    params = lam.params
    extra = params.kwonly_params or params.posonly_params or params.star_kwarg is not None
    return len(params.params) == 1 and not extra and not isinstance(params.star_arg, cst.Param)


def constructs_unknown_class(
    value: cst.BaseExpression, qualify: Callable[[cst.BaseExpression], str | None]
) -> bool:
    """``Encoder(...)`` or ``blocks.Encoder(...)``: a capitalised callee the file cannot
    resolve, taken for a class; not a call of what ``self`` holds (``self.D(x)`` calls a
    module) nor a torch name outside ``torch.nn`` (``optim.Adam(...)``)."""
    if not isinstance(value, cst.Call):
        return False
    callee = dotted_name(value.func)
    if callee is None or callee.split(".", 1)[0] == "self":
        return False
    qualified = qualify(value.func) or ""
    if qualified.startswith("torch.") and not qualified.startswith("torch.nn."):
        return False  # ``optim.Adam(...)``: no module
    return callee.rsplit(".", 1)[-1][:1].isupper()

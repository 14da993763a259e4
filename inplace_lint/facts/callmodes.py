"""Which functions of a file run with grad on, and which only under ``no_grad``.

One walk over the module lists every call (with its caller and whether it sits lexically under
``no_grad``, or in an arm of a test on grad mode that runs with grad off), then a fixed point
marks helpers called only from no-grad code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from inplace_lint.facts.classes import FUNCTION_BASES
from inplace_lint.facts.conditions import grad_off_arms
from inplace_lint.facts.memo import FunctionMemo
from inplace_lint.facts.names import ImportTable, dotted_name
from inplace_lint.facts.op_extras import (
    _NO_GRAD,
)
from inplace_lint.facts.walk import (
    children_of,
)

#: One event of the call walk: a call (node, callee name or None, caller, under no_grad) or
#: an alias assignment (None, target name, the functions it may hold, "").
CallEvent = tuple[cst.Call | None, str | None, frozenset[str] | str, bool | str]


def _call_modes(
    module: cst.Module,
    imports: ImportTable,
    every_call: list[cst.Call],
    memo: FunctionMemo | None = None,
    elsewhere: Sequence[tuple[str, Sequence[bool]]] = (),
) -> dict[str, set[bool]]:
    """For each function name, whether its calls in this file run with grad on (True) or off;
    ``elsewhere``: the modes of the calls other files of the run make (project mode).

    Every call in the module is appended to ``every_call``, in source order, on the way.
    """
    modes: dict[str, set[bool]] = {}

    def no_grad_call(node: cst.BaseExpression) -> bool:
        target = node.func if isinstance(node, cst.Call) else node
        return (imports.qualify(target) or "") in _NO_GRAD

    calls: list[tuple[str, str, bool]] = []  # (callee, caller, lexically under no_grad)
    aliases: dict[str, set[str]] = {}
    decorated: set[str] = set()
    defined: dict[str, int] = {}
    received: list[tuple[str, str, bool]] = []  # ``obj.method(...)`` of an unknown ``obj``
    for statement in children_of(module):
        if memo is None:
            events, named = _call_events(statement, no_grad_call, imports.qualify)
        else:
            events, named = memo.call_events(
                statement, lambda s: _call_events(s, no_grad_call, imports.qualify)
            )
        decorated |= named
        for node, short, caller, off in events:
            if node is None and off == "def":
                defined[short] = defined.get(short, 0) + 1  # type: ignore[index]
                continue
            if node is None:  # func = _single_tensor_adam, then func(...)
                aliases.setdefault(short, set()).update(caller)  # type: ignore[arg-type]
                continue
            every_call.append(node)
            if short is not None and short.startswith("."):
                received.append((short[1:], caller, off))  # type: ignore[arg-type]
            elif short is not None:
                for callee in aliases.get(short, {short}):
                    calls.append((callee, caller, off))  # type: ignore[arg-type]
    # a method the file defines, called on a receiver of unknown type
    # (``ctx.kernel._forward(x)``): the receiver holds an instance of one of the classes
    # that define it, so the call counts for each (``expert.copy_from_experts_module(...)``
    # under ``no_grad``, three expert classes defining it)
    calls += [
        c
        for c in received
        if defined.get(c[0], 0) >= 1 and c[0] not in _IMPLICIT and not c[0].startswith("__")
    ]
    calls += [(name, "<elsewhere>", not on) for name, seen in elsewhere for on in seen]
    sites: dict[str, list[tuple[str, bool]]] = {}
    for callee, caller, off in calls:
        sites.setdefault(callee, []).append((caller, off))
    no_grad = grad_off_closure(sites, decorated)
    for callee, caller, off in calls:
        modes.setdefault(callee, set()).add(not (off or caller in no_grad))
    return modes


def grad_off_closure(sites: dict[str, list[tuple[str, bool]]], decorated: set[str]) -> set[str]:
    """The functions that run only with grad off: the ``decorated`` ones, and, to a fixed
    point, those whose every call site (caller, lexically under no_grad) is grad-off or sits
    in such a function."""
    no_grad = set(decorated)
    changed = True
    while changed:  # a helper called only from no-grad code runs without grad too
        changed = False
        for callee in sites.keys() - no_grad:
            if all(off or caller in no_grad for caller, off in sites[callee]):
                no_grad.add(callee)
                changed = True
    return no_grad


#: methods torch calls itself (``module(x)`` runs ``forward``): their explicit calls seen are
#: not all their calls
_IMPLICIT = frozenset({"forward", "__call__", "__init__", "backward", "apply"})
#: the steps of a custom ``autograd.Function``, which torch runs with grad off
_FUNCTION_STEPS = frozenset({"forward", "backward", "setup_context", "jvp", "vjp"})


def _autograd_function(
    node: cst.ClassDef, qualify: Callable[[cst.BaseExpression], str | None]
) -> bool:
    """``node`` derives directly from ``torch.autograd.Function``."""
    return any((qualify(base.value) or "") in FUNCTION_BASES for base in node.bases)


def _call_events(
    root: cst.CSTNode,
    no_grad_call: Callable[[cst.BaseExpression], bool],
    qualify: Callable[[cst.BaseExpression], str | None],
) -> tuple[tuple[CallEvent, ...], frozenset[str]]:
    """The calls and function aliases under one top-level statement, in source order, and
    the functions it decorates with no_grad."""
    events: list[CallEvent] = []
    grad_off: list[bool] = [False]
    callers: list[str] = [""]
    decorated: set[str] = set()
    function_steps: set[int] = set()
    stack: list[object] = [root]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is tuple and node[0] == "arm":  # type: ignore[index]
            grad_off.append(grad_off[-1] or node[1])  # type: ignore[index]
            continue
        if kind is tuple:  # leaving a function (True), a with block or an arm (False)
            grad_off.pop()
            if node[0]:  # type: ignore[index]
                callers.pop()
            continue
        if kind is cst.Call:
            name = dotted_name(node.func)  # type: ignore[attr-defined]
            short = None
            if name is not None and (name.count(".") == 0 or name.startswith("self.")):
                short = name.rsplit(".", 1)[-1]
            elif name is not None:
                short = "." + name.rsplit(".", 1)[-1]
            elif type(node.func) is cst.Attribute:  # ``blocks[name].fasterquant(w)``
                short = "." + node.func.attr.value  # type: ignore[attr-defined]
            events.append((node, short, callers[-1], grad_off[-1]))  # type: ignore[arg-type]
        elif kind is cst.FunctionDef:
            assert isinstance(node, cst.FunctionDef)
            off = any(no_grad_call(d.decorator) for d in node.decorators)
            grad_off.append(off or id(node) in function_steps)
            callers.append(node.name.value)
            events.append((None, node.name.value, frozenset(), "def"))
            if off:
                decorated.add(node.name.value)
            stack.append((True,))
        elif kind is cst.ClassDef and _autograd_function(node, qualify):  # type: ignore[arg-type]
            # ``forward``/``backward`` of a custom Function run with grad off
            for item in node.body.body:  # type: ignore[attr-defined]
                if type(item) is cst.FunctionDef and item.name.value in _FUNCTION_STEPS:
                    function_steps.add(id(item))
        elif kind is cst.With:
            assert isinstance(node, cst.With)
            grad_off.append(grad_off[-1] or any(no_grad_call(i.item) for i in node.items))
            stack.append((False,))
        elif kind is cst.If and any(arms := grad_off_arms(node.test, qualify)):  # type: ignore[attr-defined]
            # ``if not torch.is_grad_enabled():``: an arm that runs with grad off
            assert isinstance(node, cst.If)
            parts: list[object] = [node.test, ("arm", arms[0]), node.body, (False,)]
            if node.orelse is not None:
                parts += [("arm", arms[1]), node.orelse, (False,)]
            stack.extend(reversed(parts))
            continue
        elif kind is cst.Assign:
            # func = _single_tensor_adam (or an if/else of two functions), then func(...)
            assert isinstance(node, cst.Assign)
            choices = [node.value]
            if isinstance(node.value, cst.IfExp):
                choices = [node.value.body, node.value.orelse]
            names = frozenset(c.value for c in choices if isinstance(c, cst.Name))
            for target in node.targets:
                if isinstance(target.target, cst.Name) and names:
                    events.append((None, target.target.value, names, ""))
        stack.extend(reversed(children_of(node)))  # type: ignore[arg-type]
    return tuple(events), frozenset(decorated)

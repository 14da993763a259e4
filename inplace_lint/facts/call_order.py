"""The order a file's plain functions are analysed in: each after the same-file functions that
call it, so that what its callers pass (the grads of ``arg_grads``: a tensor that requires
grad, or one that never does) is known when its parameters are bound.

Limits: calls by plain name only (``helper(x)``, not ``self.helper`` or through variables); a
function in a call cycle keeps its place in the file among the functions of that cycle.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from inplace_lint.facts.walk import own_nodes


def callers_first(functions: Sequence[cst.FunctionDef]) -> list[cst.FunctionDef]:
    """``functions`` (in file order) reordered so that a caller precedes its callees."""
    by_name: dict[str, cst.FunctionDef] = {}
    for func in functions:
        by_name.setdefault(func.name.value, func)
    calls = {id(func): _called(func, by_name) for func in functions}
    order: list[cst.FunctionDef] = []
    state: dict[int, int] = {}  # 1: on the stack, 2: placed
    for func in functions:
        _visit(func, calls, state, order)
    order.reverse()  # callees were placed before their callers
    return order


def _called(func: cst.FunctionDef, by_name: dict[str, cst.FunctionDef]) -> list[cst.FunctionDef]:
    found: list[cst.FunctionDef] = []
    for node in own_nodes(func):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            callee = by_name.get(node.func.value)
            if callee is not None and callee is not func and callee not in found:
                found.append(callee)
    return found


def _visit(
    func: cst.FunctionDef,
    calls: dict[int, list[cst.FunctionDef]],
    state: dict[int, int],
    order: list[cst.FunctionDef],
) -> None:
    """Depth first, without recursion (call chains may be long): post-order placement."""
    if state.get(id(func)):
        return
    stack: list[tuple[cst.FunctionDef, int]] = [(func, 0)]
    state[id(func)] = 1
    while stack:
        current, index = stack.pop()
        callees = calls.get(id(current), [])
        if index < len(callees):
            stack.append((current, index + 1))
            callee = callees[index]
            if not state.get(id(callee)):
                state[id(callee)] = 1
                stack.append((callee, 0))
            continue
        state[id(current)] = 2
        order.append(current)

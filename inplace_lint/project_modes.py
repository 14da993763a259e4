"""Project mode: the grad mode of each call one file makes to another file's functions.

A helper whose every caller in the run sits under ``with torch.no_grad():`` runs without grad
(robomimic's ``soft_update`` copying into a target network's parameters, called only from the
algorithms' no-grad blocks in other files). Within one file ``facts/callmodes.py`` finds that;
here the calls of another file are read with the standard library's parser, once per calling
file, and only where the callee may write in place.

A call is grad-off when it sits lexically in a ``with`` block of a grad-off context manager,
or in a function that is decorated grad-off or that every call in its file runs grad-off (a
fixed point, as within one file). Limits: calls by a plain name (``f(...)``) or through a
module alias (``utils.f(...)``); a ``set_grad_enabled`` flag is taken as grad on.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator

from inplace_lint.facts.callmodes import grad_off_closure
from inplace_lint.facts.op_extras import _ENABLE_GRAD, _NO_GRAD

#: the context managers and decorators that turn grad off (on), as written: the qualified
#: names the one-file analysis knows (``op_extras``) and their last parts, imported bare
_OFF = _NO_GRAD | {name.rsplit(".", 1)[1] for name in _NO_GRAD}
_ON = _ENABLE_GRAD | {name.rsplit(".", 1)[1] for name in _ENABLE_GRAD}

#: (how the call is written: a plain name, or ``alias.name``) -> the grad modes of its calls
CallKey = tuple[str, ...]


def parse(text: str) -> ast.Module | None:
    """The file's tree, or None where the standard parser refuses it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def call_modes(tree: ast.Module) -> dict[CallKey, set[bool]]:
    """For each callee as written (``("f",)``, ``("utils", "f")``), whether its calls in this
    file run with grad on (True) or off (False)."""
    sites: list[tuple[CallKey, str, bool]] = []  # (callee, enclosing function, lexically off)
    decorated: set[str] = set()
    _walk(tree.body, "<module>", False, sites, decorated)
    by_callee: dict[str, list[tuple[str, bool]]] = {}
    for key, caller, off in sites:
        if len(key) == 1:
            by_callee.setdefault(key[0], []).append((caller, off))
    no_grad = grad_off_closure(by_callee, decorated)
    modes: dict[CallKey, set[bool]] = {}
    for key, caller, off in sites:
        modes.setdefault(key, set()).add(not (off or caller in no_grad))
    return modes


def _walk(
    body: list[ast.stmt],
    caller: str,
    off: bool,
    sites: list[tuple[CallKey, str, bool]],
    decorated: set[str],
) -> None:
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            if any(_dotted(_target(d)) in _OFF for d in statement.decorator_list):
                decorated.add(statement.name)
            _walk(statement.body, statement.name, False, sites, decorated)
            continue
        if isinstance(statement, ast.ClassDef):
            _walk(statement.body, caller, off, sites, decorated)
            continue
        inner = off
        if isinstance(statement, ast.With | ast.AsyncWith):
            for item in statement.items:
                name = _dotted(_target(item.context_expr))
                inner = True if name in _OFF else False if name in _ON else inner
        for node in _own_expressions(statement):
            for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
                key = _key(call.func)
                if key is not None:
                    sites.append((key, caller, inner))
        for nested in _nested_bodies(statement):
            _walk(nested, caller, inner, sites, decorated)


def _own_expressions(statement: ast.stmt) -> Iterator[ast.AST]:
    """The parts of ``statement`` that are not nested statement bodies."""
    for field, value in ast.iter_fields(statement):
        if field in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        if isinstance(value, list):
            yield from (v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            yield value


def _nested_bodies(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        value = getattr(statement, field, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield value
    for handler in getattr(statement, "handlers", ()):
        yield handler.body
    for case in getattr(statement, "cases", ()):
        yield case.body


def _target(node: ast.expr) -> ast.expr:
    return node.func if isinstance(node, ast.Call) else node


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.insert(0, node.id)
        return ".".join(parts)
    return ""


def _key(func: ast.expr) -> CallKey | None:
    if isinstance(func, ast.Name):
        return (func.id,)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return (func.value.id, func.attr)
    return None

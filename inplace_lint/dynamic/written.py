"""What an in-place statement writes, read from its source: for naming a hazard that the
dynamic checker found by flipping a line no static finding sits on.

Only the statement's own text and its enclosing function are read (``ast``, no types, no
dataflow): the root name of the written tensor, whether the write goes through ``.data`` or
``.detach()``, whether it builds an in-place module, and whether the root is a parameter of
the enclosing function that the function has not rebound before the line. That is enough to
pick the rule whose message fits a write a run has already proved harmful; it decides
nothing about whether the write is harmful.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

__all__ = ["Written", "statement_spans", "written_at"]

_SKIPPED_PARAMETERS = frozenset({"self", "cls"})


@dataclass(frozen=True)
class Written:
    """The write a statement makes, as far as its text says."""

    root: str | None  # the name the written tensor is reached from (``x`` of ``x[0].add_()``)
    through_data: bool  # written through ``.data`` or ``.detach()``
    module_flag: bool  # the statement builds a module with ``inplace=True``
    argument: bool  # ``root`` is the enclosing function's parameter, not rebound before
    #: In ``forward``/``backward`` of a class derived from a ``...Function`` (a custom
    #: ``autograd.Function``).
    in_function: bool = False
    #: The written place as text, subscripts dropped (``cconv.weight`` of
    #: ``cconv.weight[:, 0] = w``).
    place: str | None = None
    #: the statement makes a dropout in place (``nn.Dropout(p, inplace=True)``,
    #: ``F.dropout(x, p, inplace=True)``): its random mask comes from another kernel
    random_flag: bool = False


def statement_spans(tree: ast.Module) -> dict[int, tuple[int, int]]:
    """Each line of a simple statement mapped to that statement's first and last line."""
    spans: dict[int, tuple[int, int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not _compound(node):
            last = node.end_lineno or node.lineno
            for line in range(node.lineno, last + 1):
                spans.setdefault(line, (node.lineno, last))
    return spans


def written_at(tree: ast.Module, line: int) -> Written:
    """What the simple statement covering ``line`` writes."""
    owner, function, statement = _locate(tree, line)
    if statement is None:
        return Written(None, False, False, False)
    target = _target(statement)
    root, through = _root(target) if target is not None else (None, False)
    flag = target is None and _builds_inplace_module(statement)
    argument = (
        root is not None
        and function is not None
        and _from_parameter(function, root, statement.lineno)
    )
    random = _makes_random_inplace(statement)
    in_function = _in_function(owner, function)
    return Written(root, through, flag, argument, in_function, _place(target), random)


def _makes_random_inplace(statement: ast.stmt) -> bool:
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call) or not _builds_inplace_module(node):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if "dropout" in name.lower():
            return True
    return False


def _place(target: ast.expr | None) -> str | None:
    while isinstance(target, ast.Subscript):
        target = target.value
    return ast.unparse(target) if target is not None else None


def _in_function(owner: ast.ClassDef | None, function: ast.AST | None) -> bool:
    if owner is None or not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    if function.name not in {"forward", "backward"}:
        return False
    for base in owner.bases:
        name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if name.endswith("Function"):
            return True
    return False


def _compound(node: ast.stmt) -> bool:
    return (
        isinstance(
            node,
            ast.FunctionDef
            | ast.AsyncFunctionDef
            | ast.ClassDef
            | ast.If
            | ast.For
            | ast.AsyncFor
            | ast.While
            | ast.With
            | ast.AsyncWith
            | ast.Try
            | ast.Match,
        )
        or type(node).__name__ == "TryStar"
    )


def _locate(
    tree: ast.Module, line: int
) -> tuple[ast.ClassDef | None, ast.AST | None, ast.stmt | None]:
    """The innermost class and function around ``line``, and the simple statement covering
    it."""
    found: list[tuple[ast.ClassDef | None, ast.AST | None, ast.stmt]] = []

    def visit(node: ast.AST, owner: ast.ClassDef | None, function: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                continue
            first = getattr(child, "lineno", None)
            if first is not None and not first <= line <= (child.end_lineno or first):
                continue
            if isinstance(child, ast.stmt) and not _compound(child):
                found.append((owner, function, child))
                return
            if isinstance(child, ast.ClassDef):
                visit(child, child, function)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, owner, child)
            else:
                visit(child, owner, function)

    visit(tree, None, None)
    return found[0] if found else (None, None, None)


def _target(statement: ast.stmt) -> ast.expr | None:
    """The expression the statement writes in place, where its text shows one."""
    if isinstance(statement, ast.AugAssign):
        return statement.target
    if isinstance(statement, ast.Assign):  # an attribute assigned is rebound, not written
        for target in statement.targets:
            if isinstance(target, ast.Subscript):
                return target.value
            if isinstance(target, ast.Attribute) and target.attr == "data":
                return target
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg == "out":
                return keyword.value
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr.endswith("_")
            and not func.attr.endswith("__")
        ):
            if isinstance(func.value, ast.Name) and func.value.id in {"torch", "F", "nn"}:
                return node.args[0] if node.args else None
            return func.value
    return None


def _root(node: ast.expr) -> tuple[str | None, bool]:
    """The name an access path starts from, and whether it passes ``.data``/``.detach()``."""
    through = False
    while True:
        if isinstance(node, ast.Name):
            return node.id, through
        if isinstance(node, ast.Attribute):
            through = through or node.attr == "data"
            node = node.value
        elif isinstance(node, ast.Subscript | ast.Starred):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            through = through or node.func.attr == "detach"
            node = node.func.value
        else:
            return None, through


def _builds_inplace_module(statement: ast.AST) -> bool:
    for node in ast.walk(statement):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg == "inplace" and isinstance(value, ast.Constant) and value.value:
                    return True
    return False


def _from_parameter(function: ast.AST, name: str, line: int, depth: int = 0) -> bool:
    """Whether ``name`` at ``line`` holds (part of) an argument of ``function``: a parameter
    that no statement before ``line`` rebinds (an augmented assignment keeps a tensor's
    identity, so it does not count), or a name last bound, by a plain assignment, to an
    access path (``latent["samples"]``, ``batch.x``) of such a parameter."""
    assert isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
    arguments = function.args
    names = {
        a.arg
        for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
        if a.arg not in _SKIPPED_PARAMETERS
    }
    augmented = {id(n.target) for n in ast.walk(function) if isinstance(n, ast.AugAssign)}
    stores = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.Name)
        and node.id == name
        and isinstance(node.ctx, ast.Store)
        and node.lineno < line
        and id(node) not in augmented
    ]
    if not stores:
        return name in names
    last = max(stores, key=lambda node: (node.lineno, node.col_offset))
    value = _plain_value(function, last)
    if depth >= 3 or value is None or not _access_path(value):
        return False
    root, _ = _root(value)
    return root is not None and _from_parameter(function, root, last.lineno, depth + 1)


def _plain_value(function: ast.AST, target: ast.Name) -> ast.expr | None:
    """The value of the plain ``name = value`` assignment whose target is ``target``."""
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and node.targets[0] is target:
            return node.value
    return None


def _access_path(node: ast.expr) -> bool:
    """Names, attributes and subscripts only: no call makes a new tensor on the way."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return isinstance(node, ast.Name)

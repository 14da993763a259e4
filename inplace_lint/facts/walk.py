"""A fast pre-order walk over libcst trees.

libcst's visitor protocol rebuilds every node it passes, which made the fact passes cost
more than parsing. These generators only read the dataclass fields, in source order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache

import libcst as cst

ENTER, EXIT = True, False


@cache
def _child_fields(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind))


@cache
def _is_node_type(kind: type) -> bool:
    return issubclass(kind, cst.CSTNode)


#: While set (inside :func:`shared_children`), each node's children are listed only once.
_shared: dict[int, list[cst.CSTNode]] | None = None


@contextmanager
def shared_children() -> Iterator[None]:
    """Reuse child lists across the many walks one analysis makes over the same tree.

    Keyed by node id, so the tree must stay alive for the duration; the cache is dropped on exit.
    """
    global _shared
    outer = _shared
    _shared = {} if outer is None else outer
    try:
        yield
    finally:
        _shared = outer


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    cache = _shared
    if cache is not None:
        found = cache.get(id(node))
        if found is None:
            found = cache[id(node)] = _list_children(node)
        return found
    return _list_children(node)


def _list_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            out.extend(item for item in value if _is_node_type(type(item)))
        elif _is_node_type(kind):
            out.append(value)
    return out


def events(
    root: cst.CSTNode, skip: Callable[[cst.CSTNode], bool] | None = None
) -> Iterator[tuple[bool, cst.CSTNode]]:
    """``(ENTER, node)`` before a node's children and ``(EXIT, node)`` after them.

    ``skip(node)`` true means: do not descend into that node (it is still entered and left).
    """
    stack: list[tuple[bool, cst.CSTNode]] = [(ENTER, root)]
    while stack:
        entering, node = stack.pop()
        if not entering:
            yield EXIT, node
            continue
        yield ENTER, node
        stack.append((EXIT, node))
        if skip is not None and node is not root and skip(node):
            continue
        stack.extend((ENTER, child) for child in reversed(_children(node)))


def walk(
    root: cst.CSTNode, skip: Callable[[cst.CSTNode], bool] | None = None
) -> Iterator[cst.CSTNode]:
    """Every node under ``root`` (itself included), in source order."""
    for entering, node in events(root, skip):
        if entering:
            yield node


def nested_scope(node: cst.CSTNode) -> bool:
    """Function and class bodies and lambdas: a separate scope from the one being walked."""
    return isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Lambda)


class Walker:
    """A drop-in for ``cst.CSTVisitor`` that reads the tree without rebuilding it.

    ``visit_<Node>(node)`` runs before a node's children (return False to skip them) and
    ``leave_<Node>(node)`` after them. Call ``run(root)``.
    """

    def run(self, root: cst.CSTNode) -> None:
        handlers: dict[tuple[type, bool], Callable[[cst.CSTNode], object] | None] = {}

        def handler(kind: type, entering: bool) -> Callable[[cst.CSTNode], object] | None:
            key = (kind, entering)
            if key not in handlers:
                prefix = "visit_" if entering else "leave_"
                handlers[key] = getattr(self, prefix + kind.__name__, None)
            return handlers[key]

        stack: list[tuple[bool, cst.CSTNode]] = [(ENTER, root)]
        while stack:
            entering, node = stack.pop()
            method = handler(type(node), entering)
            if not entering:
                if method is not None:
                    method(node)
                continue
            descend = method is None or method(node) is not False
            stack.append((EXIT, node))
            if descend:
                stack.extend((ENTER, child) for child in reversed(_children(node)))

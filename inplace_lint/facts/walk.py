"""A fast pre-order walk over libcst trees.

libcst's visitor protocol rebuilds every node it passes, which made the fact passes cost
more than parsing. These generators only read the dataclass fields, in source order.
"""

from __future__ import annotations

import dataclasses
import operator
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache

import libcst as cst

T = typing.TypeVar("T")
R = typing.TypeVar("R")


@cache
def _child_fields(kind: type) -> tuple[str, ...]:
    """The fields of ``kind`` that may hold a node other than trivia (by their annotation)."""
    return tuple(f.name for f in dataclasses.fields(kind) if not _never_content(f.type))


def _never_content(annotation: object) -> bool:
    """Whether a field so annotated holds only trivia, sentinels or plain values.

    Anything not understood (a forward reference, say) counts as possibly content.
    """
    if typing.get_origin(annotation) is typing.Literal:
        return True
    args = typing.get_args(annotation)
    if args:
        return all(_never_content(arg) for arg in args)
    if not isinstance(annotation, type):
        return False
    if issubclass(annotation, cst.CSTNode):
        return issubclass(annotation, _TRIVIA)
    return annotation in (str, bool, int, type(None), cst.MaybeSentinel)


#: Whitespace, comments, punctuation and operators: nodes no fact is read from by walking
#: (operators are read as their parent's field), so walks leave them out; about half of
#: all nodes.
_TRIVIA = (
    cst.BaseParenthesizableWhitespace,
    cst.TrailingWhitespace,
    cst.Newline,
    cst.EmptyLine,
    cst.Comment,
    cst.Semicolon,
    cst.Colon,
    cst.Comma,
    cst.Dot,
    cst.AssignEqual,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.BaseBinaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
    cst.BaseAugOp,
)


@cache
def _is_node_type(kind: type) -> bool:
    return issubclass(kind, cst.CSTNode) and not issubclass(kind, _TRIVIA)


#: While set (inside :func:`shared_children`), each node's children are listed only once
#: (by node id; negative ids and tuple keys hold the per-root lists of :func:`own_nodes` and
#: :func:`nodes_by_type`).
_shared: dict[typing.Any, typing.Any] | None = None


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


@contextmanager
def unshared() -> Iterator[None]:
    """No child-list cache for the extent: for trees that may be freed before the shared
    cache is (another file's helper parsed for a summary), whose node ids a later node
    could take over."""
    global _shared
    outer, _shared = _shared, None
    try:
        yield
    finally:
        _shared = outer


def children_of(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The node's child nodes in field order, trivia left out (cached inside
    :func:`shared_children`)."""
    cache = _shared
    if cache is not None:
        found = cache.get(id(node))
        if found is None:
            found = cache[id(node)] = _list_children(node)
        return found
    return _list_children(node)


#: Per node type: one getter of its content fields (a tuple of their values) and their count.
_GETTERS: dict[type, tuple[Callable[[cst.CSTNode], object], int]] = {}
#: Per type met in a content field: whether it is a node walks visit (filled as met).
_VISITED: dict[type, bool] = {}


def _getter(kind: type) -> tuple[Callable[[cst.CSTNode], object], int]:
    names = _child_fields(kind)
    found = (operator.attrgetter(*names) if names else _no_fields, len(names))
    _GETTERS[kind] = found
    return found


def _no_fields(node: cst.CSTNode) -> tuple[()]:
    return ()


def _visited(kind: type) -> bool:
    found = _VISITED[kind] = _is_node_type(kind)
    return found


def _list_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    getter, count = _GETTERS.get(type(node)) or _getter(type(node))
    values = getter(node)
    if count == 1:
        values = (values,)
    out: list[cst.CSTNode] = []
    visited = _VISITED
    for value in values:  # type: ignore[union-attr]
        kind = type(value)
        if kind is tuple or kind is list:
            for item in value:
                flag = visited.get(type(item))
                if flag or (flag is None and _visited(type(item))):
                    out.append(item)
        else:
            flag = visited.get(kind)
            if flag or (flag is None and _visited(kind)):
                out.append(value)
    return out


def walk(
    root: cst.CSTNode, skip: Callable[[cst.CSTNode], bool] | None = None
) -> Iterator[cst.CSTNode]:
    """Every node under ``root`` (itself included), in source order."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if skip is not None and node is not root and skip(node):
            continue
        stack.extend(reversed(children_of(node)))


@cache
def _expression_type(kind: type) -> bool:
    return issubclass(kind, cst.BaseExpression)


def is_expression(node: cst.CSTNode) -> bool:
    """Expressions never hold statements (imports, definitions): walks may skip them."""
    return _expression_type(type(node))


_SCOPE_TYPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def nested_scope(node: cst.CSTNode) -> bool:
    """Function and class bodies and lambdas: a separate scope from the one being walked."""
    return type(node) in _SCOPE_TYPES


def own_nodes(func: cst.FunctionDef) -> list[cst.CSTNode]:
    """The nodes of ``func``'s body outside nested scopes, in source order (cached like
    children inside :func:`shared_children`)."""
    cache = _shared
    if cache is None:
        return list(walk(func.body, skip=nested_scope))
    key = -id(func)  # negative: never a node id of the children cache
    found = cache.get(key)
    if found is None:
        found = cache[key] = list(walk(func.body, skip=nested_scope))
    return found


def nodes_by_type(root: cst.CSTNode) -> dict[type, list[cst.CSTNode]]:
    """Every node under ``root`` (itself included) by its exact type, each list in source
    order: one walk for the many passes that look for one kind of node over a whole module
    (cached like children inside :func:`shared_children`)."""
    cache = _shared
    key = ("types", id(root))
    if cache is not None:
        found = cache.get(key)
        if found is not None:
            return found
    found = {}
    for node in walk(root):
        kind = type(node)
        nodes = found.get(kind)
        if nodes is None:
            found[kind] = [node]
        else:
            nodes.append(node)
    if cache is not None:
        cache[key] = found
    return found


class Walker:
    """A drop-in for ``cst.CSTVisitor`` that reads the tree without rebuilding it.

    ``visit_<Node>(node)`` runs before a node's children (return False to skip them) and
    ``leave_<Node>(node)`` after them. Call ``run(root)``.
    """

    def run(self, root: cst.CSTNode) -> None:
        cls = type(self)
        # kept on the class itself: many visitors are classes made per call, and a table in a
        # global dict would keep each of them (and the tree their closures see) alive
        table = cls.__dict__.get("_handlers")
        if table is None:
            table = {}
            cls._handlers = table  # type: ignore[attr-defined]
        stack: list[object] = [root]
        while stack:
            item = stack.pop()
            if type(item) is tuple:  # a pending leave_<Node>(node)
                item[0](self, item[1])
                continue
            kind = type(item)
            entry = table.get(kind)
            if entry is None:
                name = kind.__name__
                entry = table[kind] = (
                    getattr(cls, "visit_" + name, None),
                    getattr(cls, "leave_" + name, None),
                )
            visit, leave = entry
            if leave is not None:
                stack.append((leave, item))
            if visit is None or visit(self, item) is not False:
                stack.extend(reversed(children_of(item)))  # type: ignore[arg-type]


#: results of ``per_node`` functions, by the node's identity (the node kept beside its result,
#: so a recycled ``id`` is never mistaken for it); emptied when it grows past the bound
_PER_NODE: dict[tuple[str, int], tuple[object, object]] = {}
_PER_NODE_BOUND = 8192


def per_node(fn: Callable[[T], R]) -> Callable[[T], R]:
    """Cache a pure function of one syntax node by the node's identity: libcst nodes hash by
    value, which would walk them whole (``stored_params`` and ``self_stores`` are asked
    about the same method for every parameter and every other method)."""
    name = f"{fn.__module__}.{fn.__qualname__}"

    def cached(node: T) -> R:
        key = (name, id(node))
        hit = _PER_NODE.get(key)
        if hit is not None and hit[0] is node:
            return hit[1]  # type: ignore[return-value]
        if len(_PER_NODE) > _PER_NODE_BOUND:
            _PER_NODE.clear()
        result = fn(node)
        _PER_NODE[key] = (node, result)
        return result

    cached.__doc__, cached.__name__ = fn.__doc__, fn.__name__
    return cached

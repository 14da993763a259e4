"""Line and column of libcst nodes, computed only where findings are.

libcst's ``MetadataWrapper(...).resolve(PositionProvider)`` visits the whole module and then
regenerates its whole source to learn positions; on a 2,000-line file that cost as much as the
analysis. Findings sit in a few top-level statements, so this module regenerates only those,
each starting at the line CPython's own ``ast`` gives for it. Where the two parsers' statements
cannot be matched up, it falls back to the whole module, and so does a lookup of a node
outside the statements computed (a fix that must see a whole module-level scope).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from inplace_lint.facts.walk import walk

__all__ = ["PositionMemo", "by_range", "module_positions", "positions_for"]

Positions = Mapping[cst.CSTNode, CodeRange]
Range = tuple[int, int, int, int]


def module_positions(module: cst.Module) -> Positions:
    """Every node's position (the whole-module route)."""
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def positions_for(
    module: cst.Module,
    tree: ast.Module | None,
    nodes: Iterable[cst.CSTNode],
    memo: PositionMemo | None = None,
) -> Positions:
    """Positions of every node in the top-level statements that contain any of ``nodes``.

    With a ``memo`` (the language server's, per document), statements computed for an
    earlier version are not generated again: their positions move by the lines they moved.
    """
    starts = _first_lines(module, tree) if tree is not None else None
    if starts is None:
        return module_positions(module)
    wanted = {id(node) for node in nodes}
    if memo is not None:
        return memo.positions(module, starts, wanted)
    known: dict[cst.CSTNode, CodeRange] = {}
    for index, statement in enumerate(module.body):
        if not _holds(statement, wanted):
            continue
        computed = _generate(module, statement, starts[index])
        if computed is None:
            return module_positions(module)
        known.update(computed)
    return _OnDemand(module, known)


def by_range(positions: Mapping[cst.CSTNode, CodeRange]) -> dict[Range, list[cst.CSTNode]]:
    """Nodes by the range they cover: (start line, start column, end line, end column)."""
    found: dict[Range, list[cst.CSTNode]] = {}
    for node, where in positions.items():
        key = (where.start.line, where.start.column, where.end.line, where.end.column)
        found.setdefault(key, []).append(node)
    return found


class _OnDemand(Mapping[cst.CSTNode, CodeRange]):
    """Known positions; the first lookup of an unknown node computes the whole module's."""

    def __init__(self, module: cst.Module, known: dict[cst.CSTNode, CodeRange]) -> None:
        self._module = module
        self._known: Mapping[cst.CSTNode, CodeRange] = known
        self._whole = False

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        try:
            return self._known[node]
        except KeyError:
            if self._whole:
                raise
            self._known = module_positions(self._module)
            self._whole = True
            return self._known[node]

    def __contains__(self, node: object) -> bool:
        return node in self._known

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._known)

    def __len__(self) -> int:
        return len(self._known)


class _Statement:
    """One top-level statement's node ids, and its positions once computed."""

    def __init__(self, statement: cst.CSTNode) -> None:
        self.ids = frozenset(id(node) for node in walk(statement))
        self.line = 0  # the line the statement started on when its positions were computed
        self.known: dict[cst.CSTNode, CodeRange] | None = None
        self._at: dict[Range, list[cst.CSTNode]] | None = None

    def at(self) -> dict[Range, list[cst.CSTNode]]:
        """Nodes by the range they cover, at the line the statement was computed at."""
        if self._at is None:
            self._at = by_range(self.known or {})
        return self._at


class PositionMemo:
    """Positions of the top-level statements of one document, kept between its versions.

    The statements are the very nodes :class:`~inplace_lint.reparse.StatementReuse` hands
    back for unchanged text, so a node's place inside its statement is known; only the line
    the statement starts on may differ.
    """

    def __init__(self) -> None:
        self._statements: dict[cst.CSTNode, _Statement] = {}

    def positions(self, module: cst.Module, starts: list[int], wanted: set[int]) -> Positions:
        previous, self._statements = self._statements, {}
        layers: list[tuple[_Statement, int]] = []
        for index, statement in enumerate(module.body):
            entry = previous.get(statement) or _Statement(statement)
            self._statements[statement] = entry
            if entry.ids.isdisjoint(wanted):
                continue
            if entry.known is None:
                known = _generate(module, statement, starts[index])
                if known is None:
                    return module_positions(module)
                entry.known, entry.line = known, starts[index]
            layers.append((entry, starts[index] - entry.line))
        return _Layered(module, layers)


def _generate(
    module: cst.Module, statement: cst.BaseStatement, line: int
) -> dict[cst.CSTNode, CodeRange] | None:
    """Positions of one top-level statement's nodes when it starts on ``line``, or None."""
    provider = PositionProvider()
    try:
        state = PositionProvidingCodegenState(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            provider=provider,
        )
        state.line = line - len(statement.leading_lines)
        statement._codegen(state)
        computed = provider._computed
    except (AttributeError, TypeError):  # libcst internals moved: take the slow route
        return None
    where = computed.get(statement)
    if where is None or where.start.line != line or where.start.column != 0:
        return None
    return computed


class _Layered(Mapping[cst.CSTNode, CodeRange]):
    """Statements' memorised positions, each moved by the lines its statement moved.

    Like :class:`_OnDemand`, the first lookup of a node outside them computes the whole
    module's positions.
    """

    def __init__(self, module: cst.Module, layers: list[tuple[_Statement, int]]) -> None:
        self._module = module
        self._layers = layers
        self._whole: Positions | None = None
        self._whole_at: dict[Range, list[cst.CSTNode]] | None = None

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        if self._whole is None:
            for entry, delta in self._layers:
                where = entry.known.get(node) if entry.known is not None else None
                if where is not None:
                    return where if not delta else _moved(where, delta)
            self._whole = module_positions(self._module)
        return self._whole[node]

    def __contains__(self, node: object) -> bool:
        if self._whole is not None:
            return node in self._whole
        return any(entry.known is not None and node in entry.known for entry, _ in self._layers)

    def __iter__(self) -> Iterator[cst.CSTNode]:
        if self._whole is not None:
            return iter(self._whole)
        return (node for entry, _ in self._layers for node in entry.known or {})

    def __len__(self) -> int:
        if self._whole is not None:
            return len(self._whole)
        return sum(len(entry.known or {}) for entry, _ in self._layers)

    def nodes_at(self, start: tuple[int, int], end: tuple[int, int]) -> list[cst.CSTNode]:
        """Every known node covering exactly ``start`` to ``end`` (lines 1-based)."""
        if self._whole is not None:
            if self._whole_at is None:
                self._whole_at = by_range(self._whole)
            return self._whole_at.get((*start, *end), [])
        found: list[cst.CSTNode] = []
        for entry, delta in self._layers:
            found.extend(entry.at().get((start[0] - delta, start[1], end[0] - delta, end[1]), []))
        return found


def _moved(where: CodeRange, delta: int) -> CodeRange:
    return CodeRange(
        (where.start.line + delta, where.start.column), (where.end.line + delta, where.end.column)
    )


def _holds(root: cst.CSTNode, wanted: set[int]) -> bool:
    return any(id(node) in wanted for node in walk(root))


def _first_lines(module: cst.Module, tree: ast.Module) -> list[int] | None:
    """The line of each top-level libcst statement's first token, or None if they disagree."""
    statements = tree.body
    lines: list[int] = []
    at = 0
    for statement in module.body:
        if at >= len(statements):
            return None
        first = statements[at]
        line = first.lineno
        if isinstance(statement, cst.SimpleStatementLine):
            at += len(statement.body)
        else:
            decorators = getattr(first, "decorator_list", None)
            if decorators:
                line = min(line, *(d.lineno for d in decorators))
            at += 1
        lines.append(line)
    return lines if at == len(statements) else None

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

__all__ = ["module_positions", "positions_for"]

Positions = Mapping[cst.CSTNode, CodeRange]


def module_positions(module: cst.Module) -> Positions:
    """Every node's position (the whole-module route)."""
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def positions_for(
    module: cst.Module, tree: ast.Module | None, nodes: Iterable[cst.CSTNode]
) -> Positions:
    """Positions of every node in the top-level statements that contain any of ``nodes``."""
    starts = _first_lines(module, tree) if tree is not None else None
    if starts is None:
        return module_positions(module)
    wanted = {id(node) for node in nodes}
    provider = PositionProvider()
    for index, statement in enumerate(module.body):
        if not _holds(statement, wanted):
            continue
        try:
            state = PositionProvidingCodegenState(
                default_indent=module.default_indent,
                default_newline=module.default_newline,
                provider=provider,
            )
            state.line = starts[index] - len(statement.leading_lines)
            statement._codegen(state)
            where = provider._computed.get(statement)
        except (AttributeError, TypeError):  # libcst internals moved: take the slow route
            return module_positions(module)
        if where is None or where.start.line != starts[index] or where.start.column != 0:
            return module_positions(module)
    return _OnDemand(module, provider._computed)


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

"""Facts of functions and statements kept between versions of one document (the language
server's).

A function's container parameters and its argument-mutation summary depend only on its own
nodes, the module's imports and the op table; so do the calls a top-level statement makes
(with whether each runs under no_grad). The language server reuses the libcst nodes of
unchanged top-level statements between edits (:mod:`inplace_lint.reparse`), so those facts
are kept under the nodes themselves, as long as the imports stay the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import libcst as cst

from inplace_lint.facts.containers import container_params
from inplace_lint.facts.names import ImportTable
from inplace_lint.facts.ops import OpTable
from inplace_lint.facts.summaries import Mutation, summarize

__all__ = ["FunctionMemo"]


class FunctionMemo:
    """Container parameters and summaries of one document's functions, by function node."""

    def __init__(self) -> None:
        self._containers: dict[cst.FunctionDef, frozenset[str]] = {}
        self._summaries: dict[tuple[cst.FunctionDef, bool], tuple[Mutation, ...]] = {}
        self._calls: dict[cst.CSTNode, Any] = {}
        self._context: tuple[dict[str, str], int] | None = None

    def start(
        self,
        imports: ImportTable,
        table: OpTable,
        functions: Iterable[cst.FunctionDef],
        statements: Iterable[cst.CSTNode],
    ) -> None:
        """Begin a version: forget what other imports decided, and vanished nodes."""
        context = (imports.names(), id(table))
        if context != self._context:
            self._summaries.clear()
            self._calls.clear()
            self._context = context
        current = set(functions)
        self._containers = {f: v for f, v in self._containers.items() if f in current}
        self._summaries = {k: v for k, v in self._summaries.items() if k[0] in current}
        tops = set(statements)
        self._calls = {s: v for s, v in self._calls.items() if s in tops}

    def containers(self, func: cst.FunctionDef) -> frozenset[str]:
        found = self._containers.get(func)
        if found is None:
            found = self._containers[func] = container_params(func)
        return found

    def summary(
        self, func: cst.FunctionDef, skip_first: bool, imports: ImportTable, table: OpTable
    ) -> tuple[Mutation, ...]:
        key = (func, skip_first)
        found = self._summaries.get(key)
        if found is None:
            found = self._summaries[key] = tuple(summarize(func, skip_first, imports, table))
        return found

    def call_events(self, statement: cst.CSTNode, compute: Callable[[cst.CSTNode], Any]) -> Any:
        """The calls under a top-level statement, as ``compute`` finds them (kept)."""
        found = self._calls.get(statement)
        if found is None:
            found = self._calls[statement] = compute(statement)
        return found

"""Which of several same-named functions of a file a call by a bare name reaches.

Argument-write summaries of plain functions are kept by name. Where a file defines one name
more than once (each test's nested ``def f``, a helper redefined in another function), the
name alone picks whichever definition was summarised first; a call reaches the definition in
its own function's scope or the nearest enclosing one, else the module's. Limits: several
definitions of the name in one scope (``if``/``else`` arms) are left to the name; a class body
nested in a function is read as the module's scope.
"""

from __future__ import annotations

import functools

import libcst as cst

from inplace_lint.facts.state import AnalyzerBase
from inplace_lint.facts.summaries import Mutation
from inplace_lint.facts.walk import own_nodes

#: a summary entry: the writes and the reason its arguments are exempt ("" when none)
Entry = tuple[list[Mutation], str]


class ScopedNames(AnalyzerBase):
    """Resolve a bare-name call among same-named plain functions by scope."""

    @functools.cached_property
    def summaries_by_def(self) -> dict[int, Entry]:
        """The summaries of plain functions by their node, filled as ``summaries`` is."""
        return {}

    @functools.cached_property
    def _enclosing_def(self) -> dict[int, cst.FunctionDef]:
        """Each nested function's directly enclosing function."""
        return {
            id(node): outer
            for outer in self._defs
            for node in own_nodes(outer)
            if type(node) is cst.FunctionDef
        }

    @functools.cached_property
    def _defs_named(self) -> dict[str, list[cst.FunctionDef]]:
        """The plain (not method) functions of the file, by name."""
        named: dict[str, list[cst.FunctionDef]] = {}
        for func in self._defs:
            if id(func) not in self._method_ids:
                named.setdefault(func.name.value, []).append(func)
        return named

    def _scoped_summary(self, name: str) -> tuple[bool, Entry | None]:
        """Whether the file defines ``name`` more than once with one definition in the
        nearest scope of this call (or none at all), and then that definition's summary
        (None when it writes nothing)."""
        defs = self._defs_named.get(name, [])
        if len(defs) < 2:
            return False, None
        level: cst.FunctionDef | None = self.scope.ctx.node
        while True:
            found = [d for d in defs if self._enclosing_def.get(id(d)) is level]
            if len(found) > 1:
                return False, None  # ``if``/``else`` arms of one scope: left to the name
            if found:
                return True, self.summaries_by_def.get(id(found[0]))
            if level is None:
                return True, None
            level = self._enclosing_def.get(id(level))

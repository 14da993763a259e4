"""Summaries of the functions this file imports from other files of the run (project mode).

``inplace_lint.project`` ships each such function's source with the file's analysis; here it is
parsed alone and summarised like a same-file helper (which parameters it writes in place), with
the torch names of its own file's imports. Its writes are then reported at the calls in this
file (``Mutation.origin``), since the function's own lines are not this file's. A function the
file also defines or rebinds at the top level is this file's, not the import's. A shipped module
class is summarised by its ``forward`` (``Encoder.forward``), which the calls of its instances
here apply (the resolver knows the class's local name as a module's, ``foreign_modules``).
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import replace
from functools import lru_cache

import libcst as cst

from inplace_lint.facts.heuristics import exempt_reason, runs_without_grad
from inplace_lint.facts.names import ImportTable
from inplace_lint.facts.state import AnalyzerBase
from inplace_lint.facts.summaries import summarize, tensor_writes
from inplace_lint.facts.walk import unshared, walk
from inplace_lint.from_ast import Unsupported, module_from_ast
from inplace_lint.project_view import ForeignFunction, ProjectView


class Foreign(AnalyzerBase):
    """The project-mode room of the interpreter (see the module docstring)."""

    def _summarize_foreign(self) -> None:
        view = self.project
        if view is None:
            return
        with unshared():  # the shipped trees live in an LRU cache, not as long as this file's
            self._summarize_shipped(view)

    def _summarize_shipped(self, view: ProjectView) -> None:
        # judged at their callers in other files, which summarise them as below
        self.facts.called.update(n for n in view.called_elsewhere if "." not in n)
        self.facts.called_elsewhere.update(view.called_elsewhere)
        for shipped in view.foreign:
            if shipped.local in self.functions or shipped.local in self.classes:
                continue
            parsed = _parsed(shipped)
            if parsed is None:
                continue
            func, imports = parsed
            is_class = shipped.kind == "class"
            origin = f"defined in {shipped.display}, line {shipped.line}"
            summary = summarize(func, is_class, imports, self.table)
            kept = tensor_writes(summary, self._not_tensor_params(func))
            mutations = [replace(m, origin=origin) for m in kept]
            if mutations:
                modes = None if is_class else self.call_modes.get(shipped.local)
                no_grad = runs_without_grad(func, imports, modes)
                key = f"{shipped.local}.forward" if is_class else shipped.local
                self.summaries[key] = (mutations, exempt_reason(func, no_grad))


@lru_cache(maxsize=256)
def _parsed(shipped: ForeignFunction) -> tuple[cst.FunctionDef, ImportTable] | None:
    """The shipped function (a shipped class's ``forward``) and its file's import table; None
    if libcst cannot parse it."""
    try:  # libcst nodes built from the stdlib tree: several times cheaper than its parser
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ``"\d"`` in a string: the engine's screen says so
            module = module_from_ast(ast.parse(shipped.source))
            header = module_from_ast(ast.parse(shipped.imports))
    except (SyntaxError, ValueError, RecursionError, Unsupported):
        try:
            module = cst.parse_module(shipped.source)
            header = cst.parse_module(shipped.imports)
        except (cst.ParserSyntaxError, RecursionError):
            return None
    func = module.body[0] if module.body else None
    if isinstance(func, cst.ClassDef) and shipped.kind == "class":
        body = func.body.body if isinstance(func.body, cst.IndentedBlock) else ()
        methods = [m for m in body if isinstance(m, cst.FunctionDef)]
        func = next((m for m in methods if m.name.value == "forward"), None)
    if not isinstance(func, cst.FunctionDef):
        return None
    return func, ImportTable.from_statements(walk(header))

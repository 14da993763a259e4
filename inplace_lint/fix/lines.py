"""Line-level edits the newer rewrites share: whole statements on their own lines.

The older rewrites edit inside one statement; the newer ones wrap a statement in a block,
insert one at the top of a function or move one after another. Each needs the statement to
stand alone on its line(s) in an indented block (not after ``;``, not in ``if x: y``), and
these helpers refuse every other shape by returning ``None``.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.finding import Edit, Position
from inplace_lint.fix.safety import SCOPES, SafetyAnalysis
from inplace_lint.fix.tree import NEWLINE

__all__ = ["Built", "LineEdits", "parameter_names"]

#: A rewrite: its description, its edits and whether it is safe.
Built = tuple[str, list[Edit], bool]


class LineEdits(SafetyAnalysis):
    """Statement-level edits over one module's tree."""

    def torch_name(self) -> str | None:
        """The local name ``import torch`` bound (``torch``, or its ``as`` alias)."""
        names = sorted(local for local, full in self.aliases.items() if full == "torch")
        return "torch" if "torch" in names else (names[0] if names else None)

    def own_line(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The ``SimpleStatementLine`` holding ``node`` when its statement is alone on it and
        it sits in an indented block or the module body."""
        small = node if isinstance(node, cst.BaseSmallStatement) else self.statement(node)
        line = self.parent.get(small) if small is not None else None
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        if not isinstance(self.parent.get(line), cst.IndentedBlock | cst.Module):
            return None
        start = self.start(line)
        if self.lines()[start.line - 1][: start.column - 1].strip():
            return None
        return line

    def indent_of(self, line: cst.CSTNode) -> str:
        """The whitespace before ``line`` on its first line."""
        start = self.start(line)
        return self.lines()[start.line - 1][: start.column - 1]

    def newline_of(self, line_number: int) -> str:
        """The line ending of a line (the module's default on a last line without one)."""
        ending = NEWLINE.search(self.lines()[line_number - 1])
        return ending.group(0) if ending else self.module.default_newline

    def after_line(self, line: cst.CSTNode) -> Position | None:
        """The start of the line after ``line``'s last line (``None`` at a file's end)."""
        last = self.end(line).line
        if last >= len(self.lines()) or not NEWLINE.search(self.lines()[last - 1]):
            return None
        return Position(last + 1, 1)

    def whole_lines(self, line: cst.CSTNode) -> tuple[Position, Position, str] | None:
        """``line``'s full text, from its first column to the start of the line after it."""
        after = self.after_line(line)
        if after is None:
            return None
        begin = Position(self.start(line).line, 1)
        return begin, after, self.text(begin, after)

    def function_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The innermost function, lambda or class around ``node``, if it is a function."""
        scope = next((a for a in self.ancestors(node) if isinstance(a, SCOPES)), None)
        return scope if isinstance(scope, cst.FunctionDef) else None

    def insert_at_top(self, function: cst.FunctionDef, text: str) -> Edit | None:
        """An edit putting the statement ``text`` first in ``function``'s body, after its
        docstring; ``None`` for a one-line body (``def f(x): return x``)."""
        body = function.body
        if not isinstance(body, cst.IndentedBlock) or not body.body:
            return None
        statements = list(body.body)
        first = statements[0]
        if _is_docstring(first):
            if len(statements) == 1:
                return None
            first = statements[1]
        start = self.start(first)
        before = self.lines()[start.line - 1][: start.column - 1]
        if before.strip():
            return None
        newline = self.newline_of(start.line)
        return Edit(start, start, f"{text}{newline}{before}")


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


def parameter_names(function: cst.FunctionDef) -> set[str]:
    """Every parameter ``function`` declares, ``*args`` and ``**kwargs`` included."""
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return {p.name.value for p in every}

"""Parse an edited document again, reusing the libcst statements whose text did not change.

The language server lints the whole buffer after every edit, and libcst's parse of a
2,000-line file takes about 0.2 s. An edit usually touches one top-level statement, so the
buffer is cut into top-level segments (the lines of one or more statements, with the blank and
comment lines before them), each segment is parsed once and its statements are kept under its
text, and the module is put together from them. The result equals ``cst.parse_module(text)``
node for node (the tests check it on every example and on the bench corpora); wherever that
could not hold, the whole text is parsed as before:

- segments are cut only where the lines between two statements are empty or unindented
  comments (an indented comment, even an indented blank line, after a block belongs to that
  block's footer);
- a segment parsed alone decides its own default indent and newline; when the segments that
  can decide them disagree, a block would be printed with the wrong indent, so the whole text
  is parsed.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from inplace_lint.facts.memo import FunctionMemo
from inplace_lint.fix import ParentMemo
from inplace_lint.positions import PositionMemo

__all__ = ["StatementReuse"]

_NEWLINE = re.compile(r"\r\n|\r|\n")
#: A gap line that libcst may attach to the block before it rather than the statement after
#: (an indented comment, or an indented line of blanks).
_INDENTED = re.compile(r"[ \t\f]")


@dataclass(frozen=True)
class _Piece:
    """One segment, parsed: its statements (blank and comment lines before them included)."""

    statements: tuple[cst.BaseStatement, ...]
    header: Sequence[cst.EmptyLine]  # the file's header, when this is the first segment
    footer: Sequence[cst.EmptyLine]
    indent: str | None  # the default indent it decides, if it holds an indented block
    newline: str | None  # the default newline it decides, if it holds a line break
    trailing_newline: bool


class StatementReuse:
    """Statements of the previous parse of one document, by the text of their segment.

    It also carries what later stages learn about those statements, keyed by the nodes
    themselves: statements' positions and parent links, functions' own facts.
    """

    def __init__(self) -> None:
        self._pieces: dict[tuple[str, bool], _Piece] = {}
        self.positions = PositionMemo()
        self.parents = ParentMemo()
        self.functions = FunctionMemo()

    def parse(self, text: str, tree: ast.Module) -> cst.Module:
        """``cst.parse_module(text)``, reusing the segments parsed last time."""
        cuts = _cuts(text, tree)
        if cuts is None:
            self._pieces = {}
            return cst.parse_module(text)
        previous, current = self._pieces, {}
        pieces: list[_Piece] = []
        for begin, end in itertools.pairwise(cuts):
            key = (text[begin:end], begin == 0)
            # a node may sit at one place only: a segment repeated in this text (the same
            # statement twice) gets nodes of its own, parsed again each time
            piece = None if key in current else previous.get(key)
            if piece is None:
                try:
                    piece = _piece(*key)
                except cst.ParserSyntaxError:  # report it at its place in the whole text
                    self._pieces = {}
                    return cst.parse_module(text)
            current.setdefault(key, piece)
            pieces.append(piece)
        self._pieces = current
        assembled = _assemble(pieces)
        return assembled if assembled is not None else cst.parse_module(text)


def _cuts(text: str, tree: ast.Module) -> list[int] | None:
    """Offsets where segments begin (and the text's end), or None when there is one segment."""
    body = tree.body
    if len(body) < 2:
        return None
    starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
    cuts = [0]
    for before, after in itertools.pairwise(body):
        last = before.end_lineno or before.lineno
        decorators = getattr(after, "decorator_list", None) or ()
        first = min([after.lineno, *(d.lineno for d in decorators)])
        if first <= last or last >= len(starts):
            continue  # ``a = 1; b = 2``: one line, one segment
        gap = text[starts[last] : starts[first - 1]]
        if any(_INDENTED.match(line) for line in _NEWLINE.split(gap)):
            continue
        cuts.append(starts[last])
    if len(cuts) == 1:
        return None
    cuts.append(len(text))
    return cuts


def _piece(segment: str, first: bool) -> _Piece:
    module = cst.parse_module(segment)
    statements = list(module.body)
    if statements and module.header and not first:
        lead = statements[0]
        statements[0] = lead.with_changes(leading_lines=[*module.header, *lead.leading_lines])
    return _Piece(
        statements=tuple(statements),
        header=module.header if first else (),
        footer=module.footer,
        indent=module.default_indent if _has_block(module) else None,
        newline=module.default_newline if _NEWLINE.search(segment) else None,
        trailing_newline=module.has_trailing_newline,
    )


def _assemble(pieces: list[_Piece]) -> cst.Module | None:
    """One module from the segments, or None if they disagree on its settings."""
    indents = {p.indent for p in pieces if p.indent is not None}
    newlines = {p.newline for p in pieces if p.newline is not None}
    if len(indents) > 1 or len(newlines) > 1:
        return None
    first, last = pieces[0], pieces[-1]
    body: list[cst.BaseStatement] = []
    for piece in pieces:
        if not piece.statements or (piece.footer and piece is not last):
            return None  # lines after a statement inside the file: not a clean cut
        body.extend(piece.statements)
    default = cst.Module([])
    return cst.Module(
        body=body,
        header=first.header,
        footer=last.footer,
        encoding=default.encoding,
        default_indent=next(iter(indents)) if indents else default.default_indent,
        default_newline=next(iter(newlines)) if newlines else default.default_newline,
        has_trailing_newline=last.trailing_newline,
    )


def _has_block(module: cst.Module) -> bool:
    """Whether the segment holds an indented block, which decides its default indent."""
    for statement in module.body:
        if isinstance(statement, cst.BaseCompoundStatement) and _indented(statement):
            return True
    return False


def _indented(node: cst.CSTNode) -> bool:
    body = getattr(node, "body", None)
    if isinstance(body, cst.IndentedBlock):
        return True
    for name in ("orelse", "handlers", "finalbody", "cases"):
        more = getattr(node, name, None)
        items = more if isinstance(more, list | tuple) else [more] if more is not None else []
        if any(_indented(item) for item in items):
            return True
    return False

"""One module as the autofix reads it: positions, parent links, imports and source text.

:class:`FixTree` answers where a finding's node is, what holds it and what an import alias
stands for; :class:`ParentMemo` keeps the parent links of a document's unchanged top-level
statements between its versions (the language server's).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence

import libcst as cst
from libcst.metadata import CodeRange

from inplace_lint.facts.walk import children_of, walk
from inplace_lint.finding import Finding, Position
from inplace_lint.outofplace import dotted_name
from inplace_lint.positions import Range, by_range, module_positions

__all__ = ["NEWLINE", "FixTree", "ParentMemo", "ScopeIndex"]

NEWLINE = re.compile(r"\r\n|\r|\n")

_Links = tuple[dict[cst.CSTNode, cst.CSTNode], list[cst.Import | cst.ImportFrom]]


def _links(root: cst.CSTNode) -> _Links:
    """Parent links under ``root`` and its imports, in the order a stack walk meets them."""
    parent: dict[cst.CSTNode, cst.CSTNode] = {}
    imports: list[cst.Import | cst.ImportFrom] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if type(node) is cst.Import or type(node) is cst.ImportFrom:
            imports.append(node)
        for child in children_of(node):
            parent[child] = node
            stack.append(child)
    return parent, imports


ScopeIndex = tuple[dict[str, list[tuple[cst.Name, bool]]], set[str]]


class ParentMemo:
    """Parent links of one document's top-level statements, kept between its versions, and
    the name indexes of its scopes and classes (each depends only on its own nodes)."""

    def __init__(self) -> None:
        self._links: dict[cst.CSTNode, _Links] = {}
        self.scopes: dict[cst.CSTNode, ScopeIndex] = {}
        self.classes: dict[cst.ClassDef, dict[str, list[cst.Attribute]]] = {}

    def links(self, statement: cst.CSTNode) -> _Links:
        found = self._links.get(statement)
        if found is None:
            found = self._links[statement] = _links(statement)
        return found

    def keep(self, statements: Sequence[cst.CSTNode]) -> None:
        """Forget the statements of older versions."""
        current = set(statements)
        for statement in [s for s in self._links if s not in current]:
            del self._links[statement]


class FixTree:
    """Positions, parents and imports of one module."""

    def __init__(
        self,
        module: cst.Module,
        positions: Mapping[cst.CSTNode, CodeRange] | None = None,
        text: str | None = None,
        parents: ParentMemo | None = None,
    ) -> None:
        self.module = module
        if positions is None:
            positions = module_positions(module)
        self.pos: Mapping[cst.CSTNode, CodeRange] = positions
        self.parent: dict[cst.CSTNode, cst.CSTNode] = {}
        self.at: dict[Range, list[cst.CSTNode]] | None = None
        self.aliases: dict[str, str] = {}
        self._text = text
        children = children_of(module)
        for child in children:
            self.parent[child] = module
        # the walk goes last statement first (a stack): an earlier import's alias wins
        for child in reversed(children):
            links, imports = _links(child) if parents is None else parents.links(child)
            self.parent.update(links)
            for node in imports:
                self._record_import(node)
        if parents is not None:
            parents.keep(children)
        self._lines: list[str] | None = None
        #: same-file classes and helpers whose safety is being judged (no recursion)
        self._judging: set[cst.CSTNode] = set()
        self._scopes: dict[cst.CSTNode, ScopeIndex] = {}
        self._classes: dict[cst.ClassDef, dict[str, list[cst.Attribute]]] = {}
        if parents is not None:  # indexes of scopes and classes that are still in the tree
            self._scopes = parents.scopes = {
                k: v for k, v in parents.scopes.items() if k in self.parent
            }
            self._classes = parents.classes = {
                k: v for k, v in parents.classes.items() if k in self.parent
            }

    def _record_import(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name)
                if full is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.aliases[alias.asname.name.value] = full
                else:
                    root = full.split(".")[0]
                    self.aliases[root] = root
            return
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = dotted_name(node.module)
        if base is None:
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{base}.{name}"

    def qualified(self, node: cst.BaseExpression) -> str | None:
        """``F.relu`` -> ``torch.nn.functional.relu`` through the module's imports."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head in self.aliases:
            return self.aliases[head] + (f".{rest}" if rest else "")
        return None

    @functools.cached_property
    def grad_targets(self) -> frozenset[str]:
        """Names some ``torch.autograd.grad(out, inputs)`` or ``.backward(inputs=...)`` in the
        module differentiates against: rebinding one of them changes what is differentiated."""
        found: set[str] = set()
        for node in walk(self.module):
            if not isinstance(node, cst.Call):
                continue
            inputs: cst.BaseExpression | None = None
            for position, arg in enumerate(node.args):
                keyword = arg.keyword.value if arg.keyword is not None else None
                if keyword == "inputs" or (
                    keyword is None and position == 1 and self._is_grad_call(node)
                ):
                    inputs = arg.value
            if inputs is None:
                continue
            elements = (
                [e.value for e in inputs.elements]
                if isinstance(inputs, cst.List | cst.Tuple)
                else [inputs]
            )
            found.update(e.value for e in elements if isinstance(e, cst.Name))
        return frozenset(found)

    def _is_grad_call(self, call: cst.Call) -> bool:
        name = self.qualified(call.func) or dotted_name(call.func) or ""
        return name in ("torch.autograd.grad", "autograd.grad")

    def is_torch(self, node: cst.BaseExpression) -> bool:
        name = self.qualified(node)
        return name is not None and (name == "torch" or name.startswith("torch."))

    def node_at(self, finding: Finding) -> cst.CSTNode | None:
        start = (finding.start.line, finding.start.column - 1)
        end = (finding.end.line, finding.end.column - 1)
        nodes_at = getattr(self.pos, "nodes_at", None)
        if nodes_at is not None:
            nodes = nodes_at(start, end)
        else:
            if self.at is None:
                self.at = by_range(self.pos)
            nodes = self.at.get((*start, *end), [])
        for kind in (cst.Call, cst.AugAssign, cst.Subscript, cst.Assign):
            for node in nodes:
                if isinstance(node, kind):
                    return node
        return None

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        while node in self.parent:
            node = self.parent[node]
            yield node

    def start(self, node: cst.CSTNode) -> Position:
        where = self.pos[node]
        return Position(where.start.line, where.start.column + 1)

    def end(self, node: cst.CSTNode) -> Position:
        where = self.pos[node]
        return Position(where.end.line, where.end.column + 1)

    def lines(self) -> list[str]:
        if self._lines is None:
            code = self._text if self._text is not None else self.module.code
            self._lines = []
            begin = 0
            for match in NEWLINE.finditer(code):
                self._lines.append(code[begin : match.end()])
                begin = match.end()
            self._lines.append(code[begin:])
        return self._lines

    def text(self, start: Position, end: Position) -> str:
        lines = self.lines()
        if start.line == end.line:
            return lines[start.line - 1][start.column - 1 : end.column - 1]
        parts = [lines[start.line - 1][start.column - 1 :]]
        parts.extend(lines[start.line : end.line - 1])
        parts.append(lines[end.line - 1][: end.column - 1])
        return "".join(parts)

    def statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The small statement (``Expr``, ``Assign``, ...) that holds ``node``, or is it: an
        ``AugAssign`` is its own statement (asking only its ancestors found the ``def``)."""
        for parent in (node, *self.ancestors(node)):
            if isinstance(parent, cst.BaseSmallStatement):
                return parent
            if isinstance(parent, cst.BaseCompoundStatement):
                return parent
        return None

    def is_statement(self, call: cst.CSTNode) -> bool:
        """``call`` is a whole expression statement (its value is thrown away)."""
        parent = self.parent.get(call)
        return isinstance(parent, cst.Expr) and parent.value is call

    def assigned_to(self, value: cst.CSTNode) -> str | None:
        """``y`` when ``value`` is the whole right-hand side of ``y = value``."""
        parent = self.parent.get(value)
        if (
            isinstance(parent, cst.Assign)
            and parent.value is value
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
        ):
            return parent.targets[0].target.value
        return None

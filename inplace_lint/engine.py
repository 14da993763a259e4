"""Run one file, or many, through screen -> parse -> facts -> checks -> filter."""

from __future__ import annotations

import ast
import dataclasses
import gc
import stat
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import libcst as cst
from libcst.metadata import CodeRange

from inplace_lint.budget import Budget, OverBudget
from inplace_lint.checks import PARSE_ERROR, LineOf, Message, RawFinding, all_rules
from inplace_lint.config import Config
from inplace_lint.facts.dataflow import analyze
from inplace_lint.facts.ops import load_table
from inplace_lint.facts.walk import shared_children
from inplace_lint.finding import Finding, Position, Related
from inplace_lint.fix import attach_fixes
from inplace_lint.from_ast import Unsupported, module_from_ast
from inplace_lint.noqa import noqa_map, suppressed
from inplace_lint.positions import positions_for
from inplace_lint.project_view import ProjectView
from inplace_lint.reparse import StatementReuse
from inplace_lint.screen import may_contain_hazard
from inplace_lint.source import DecodeError, decode

#: Files larger than this are not parsed (reported as IPL999).
MAX_BYTES = 20 * 1024 * 1024
#: The same for notebooks, whose outputs (images) weigh more than their code.
MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024
#: Syntax trees deeper than this are not handed to libcst, whose parser and visitors recurse.
MAX_DEPTH = 400
_RECURSION_LIMIT = 20_000
#: How a message names a line it refers to ("line 67"); a notebook names the cell too.
LINE_LABEL: ContextVar[Callable[[int], str]] = ContextVar("LINE_LABEL", default=str)


@dataclass(frozen=True)
class FileResult:
    """The findings for one file, or the one-line reason it could not be read."""

    path: str
    findings: tuple[Finding, ...]
    error: str | None = None


def lint_source(
    text: str,
    path: str = "<stdin>",
    codes: Iterable[str] | None = None,
    *,
    tree: ast.AST | None = None,
    noqa: bool = True,
    reuse: StatementReuse | None = None,
    fixes: bool = True,
    project: ProjectView | None = None,
    assume_grad: bool = False,
) -> list[Finding]:
    """Lint Python source text; ``codes`` limits the rules (default: those on by default).

    ``tree`` is ``ast.parse(text)`` when the caller already has it (flake8 does), so the syntax
    screen does not parse again; ``noqa=False`` keeps findings that ``# noqa`` would silence;
    ``reuse`` keeps the statements of an earlier version of the same document (the language
    server's edits), so only the changed ones are parsed again; ``fixes=False`` leaves the
    findings without fixes, for a caller that cannot offer them (flake8), which saves building
    and verifying them; ``project`` is what the other files of the run say (project mode);
    ``assume_grad`` adds the opt-in findings of ``facts/assumed_grad.py``.
    """
    enabled = frozenset(codes) if codes is not None else Config().enabled_codes()
    # a call of another file's helper may be this file's only write
    foreign = project is not None and bool(project.foreign)
    if not foreign and not may_contain_hazard(text, enabled):
        return []
    # A syntax tree is a large acyclic heap: the cyclic collector's passes over it cost a
    # fifth of the lint and free nothing, so it pauses for the file (reference counting
    # still frees everything). It pauses before the stdlib parse too: in a long-lived
    # process (the language server) that parse could set off a full pass over the heap.
    collecting = gc.isenabled()
    gc.disable()
    try:
        run = (project, assume_grad)
        return _lint_screened(text, path, enabled, tree, noqa, reuse, fixes, run)
    finally:
        if collecting:
            gc.enable()


def _lint_screened(
    text: str,
    path: str,
    enabled: frozenset[str],
    tree: ast.AST | None,
    noqa: bool,
    reuse: StatementReuse | None,
    fixes: bool = True,
    run: tuple[ProjectView | None, bool] = (None, False),
) -> list[Finding]:
    problem, tree = _screen_syntax(text, path, tree)
    if problem is not None:
        return [problem]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION_LIMIT))
    load_table()  # loaded once per process: setting up is not this file's analysis time
    budget = Budget().start()  # a file over budget is reported as IPL999, not waited for
    try:
        if reuse is None and isinstance(tree, ast.Module) and not _has_findings(tree, enabled, run):
            return []
        if reuse is not None and isinstance(tree, ast.Module):
            module = reuse.parse(text, tree)
        else:
            module = cst.parse_module(text)
        with shared_children():
            kept = reuse.functions if reuse is not None else None
            facts = analyze(module, memo=kept, project=run[0], assume_grad=run[1])
            raw = [f for rule in all_rules() if rule.code in enabled for f in rule.check(facts)]
            raw = _conditioned(raw, facts.assumed_grad)
            raw = _apply_precedence(raw)
            if not raw:
                return []
            tops = tree if isinstance(tree, ast.Module) else None
            memo = reuse.positions if reuse is not None else None
            positions = positions_for(module, tops, _nodes_to_place(raw), memo)
            parents = reuse.parents if reuse is not None else None
            placed = _place(raw, path, positions)
            if fixes:
                placed = attach_fixes(module, placed, positions, text, parents)
        return _filter(placed, text) if noqa else sorted(placed, key=Finding.sort_key)
    except cst.ParserSyntaxError as exc:
        return [_parse_error(path, exc.raw_line, exc.raw_column + 1, exc.message)]
    except RecursionError:
        return [_parse_error(path, 1, 1, "too deeply nested to analyse")]
    except OverBudget as exc:
        return [_parse_error(path, 1, 1, str(exc))]
    finally:
        budget.stop()
        sys.setrecursionlimit(limit)


def _has_findings(
    tree: ast.Module, enabled: frozenset[str], run: tuple[ProjectView | None, bool]
) -> bool:
    """Whether the analysis finds anything on a tree built from the stdlib one.

    Most files have no finding, and this answers for them at a fraction of the cost of
    libcst's parser; a file with findings is analysed again on libcst's own tree, which places
    them and builds their fixes. A construct the builder does not make counts as a finding.
    """
    try:
        module = module_from_ast(tree)
    except Unsupported:
        return True
    with shared_children():
        facts = analyze(module, project=run[0], assume_grad=run[1])
        return any(
            _apply_precedence([f for r in all_rules() if r.code in enabled for f in r.check(facts)])
        )


def _conditioned(raw: list[RawFinding], assumed: dict[int, tuple[str, ...]]) -> list[RawFinding]:
    """The opt-in findings of ``--assume-grad`` say what they assume."""
    if not assumed:
        return raw
    out = []
    for item in raw:
        names = assumed.get(id(item.node))
        if names is not None:
            which = " or ".join(f"`{n}`" for n in names)
            note = f" (if {which} requires grad: no caller in this run shows whether it does)"
            parts = (item.message,) if isinstance(item.message, str) else tuple(item.message)
            item = dataclasses.replace(item, message=(*parts, note))
        out.append(item)
    return out


def _nodes_to_place(raw: list[RawFinding]) -> Iterator[cst.CSTNode]:
    for item in raw:
        yield item.node
        if item.stmt is not None:
            yield item.stmt
        for node, _ in item.related:
            yield node
        yield from item.references()


def _screen_syntax(
    text: str, path: str, tree: ast.AST | None = None
) -> tuple[Finding | None, ast.AST | None]:
    """CPython's own verdict on the syntax, and a bound on nesting, before libcst sees it.

    Returns the problem, if any, and the stdlib tree (whose statement lines place findings).
    """
    try:
        if tree is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
    except SyntaxError as exc:
        reason = exc.msg or "syntax error"
        return _parse_error(path, exc.lineno or 1, exc.offset or 1, reason), None
    except (RecursionError, MemoryError, ValueError) as exc:
        return _parse_error(path, 1, 1, f"too complex to parse ({type(exc).__name__})"), None
    deep = _too_deep(tree)
    if deep is not None:
        line = getattr(deep, "lineno", 1)
        return _parse_error(path, line, 1, f"nested more than {MAX_DEPTH} levels deep"), None
    return None, tree


#: stdlib node types that never have child nodes: the depth walk does not look inside them.
_AST_LEAVES = (ast.Name, ast.Constant, ast.expr_context, ast.operator, ast.cmpop, ast.unaryop)


def _too_deep(tree: ast.AST) -> ast.AST | None:
    """A node more than ``MAX_DEPTH`` levels down, if any (iterative: no recursion)."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth > MAX_DEPTH:
            return node
        depth += 1
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST) and not isinstance(item, _AST_LEAVES):
                        push((item, depth))
            elif isinstance(value, ast.AST) and not isinstance(value, _AST_LEAVES):
                push((value, depth))
    return None


def lint_bytes(
    data: bytes,
    path: str,
    codes: Iterable[str] | None = None,
    project: ProjectView | None = None,
    assume_grad: bool = False,
) -> list[Finding]:
    """Decode (BOM, PEP 263) and lint; undecodable bytes give one IPL999 finding.

    A ``path`` ending in ``.ipynb`` is read as a Jupyter notebook (see notebook.py).
    """
    if path.lower().endswith(".ipynb"):
        from inplace_lint.notebook import lint_notebook  # notebook.py builds on this module

        return lint_notebook(data, path, codes)
    try:
        text = decode(data).text
    except DecodeError as exc:
        return [_parse_error(path, 1, 1, str(exc))]
    if "\x00" in text:
        return [
            _parse_error(
                path, text[: text.index("\x00")].count("\n") + 1, 1, "source contains a null byte"
            )
        ]
    return lint_source(text, path, codes, project=project, assume_grad=assume_grad)


def lint_path(
    path: Path, display: str, config: Config, project: ProjectView | None = None
) -> FileResult:
    """Read and lint one file with the codes ``config`` enables for it (``project``: what the
    other files of the run say of it)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end
            return FileResult(display, (), error=f"cannot read {display}: not a regular file")
        size = info.st_size
        if size > (MAX_NOTEBOOK_BYTES if path.suffix.lower() == ".ipynb" else MAX_BYTES):
            finding = _parse_error(display, 1, 1, f"file too large ({size} bytes)")
            return FileResult(display, (finding,))
        data = path.read_bytes()
    except OSError as exc:
        return FileResult(display, (), error=f"cannot read {display}: {exc.strerror or exc}")
    findings = lint_bytes(data, display, config.codes_for(str(path)), project, config.assume_grad)
    return FileResult(display, tuple(findings))


@cache
def _supersedes() -> dict[str, tuple[str, ...]]:
    """Each code and the codes it hides on the same write: the first is the louder failure."""
    return {rule.code: rule.supersedes for rule in all_rules() if rule.supersedes}


def _apply_precedence(raw: list[RawFinding]) -> list[RawFinding]:
    """Drop a finding when another code on the same write supersedes it (``Rule.supersedes``)."""
    codes_at: dict[int, set[str]] = {}
    for item in raw:
        codes_at.setdefault(id(item.node), set()).add(item.code)
    supersedes = _supersedes()
    kept = []
    for item in raw:
        here = codes_at[id(item.node)]
        if any(item.code in supersedes.get(other, ()) for other in here):
            continue
        kept.append(item)
    return kept


def _parse_error(path: str, line: int, column: int, reason: str) -> Finding:
    reason = " ".join(reason.split())
    position = Position(max(line, 1), max(column, 1))
    return Finding(path, position, position, PARSE_ERROR, f"cannot parse: {reason}")


def _place(
    raw: list[RawFinding], path: str, positions: Mapping[cst.CSTNode, CodeRange]
) -> list[Finding]:
    """Findings with lines and columns, their messages' line references filled in; a raw
    finding whose node has no position, or a second one of a code at one place, is dropped."""
    findings: list[Finding] = []
    seen: set[tuple[str, int, int]] = set()
    for item in raw:
        where = positions.get(item.node)
        if where is None:
            continue
        start = Position(where.start.line, where.start.column + 1)
        end = Position(where.end.line, where.end.column + 1)
        key = (item.code, start.line, start.column)
        if key in seen:
            continue
        seen.add(key)
        related = tuple(
            Related(Position(p.start.line, p.start.column + 1), message)
            for node, message in item.related
            if (p := positions.get(node)) is not None
        )
        lines = _statement_lines(item.stmt, positions)
        if lines is not None and not lines[0] <= start.line <= lines[1]:
            lines = None
        findings.append(
            Finding(
                path=path,
                start=start,
                end=end,
                code=item.code,
                message=_render(item.message, positions),
                related=related,
                statement_lines=lines,
            )
        )
    return findings


def _render(message: Message, positions: Mapping[cst.CSTNode, CodeRange]) -> str:
    """The message's text with each line reference filled in, on one line."""
    if not isinstance(message, str):
        message = "".join(
            part if isinstance(part, str) else _line_of(part, positions) for part in message
        )
    return " ".join(message.split())


def _line_of(ref: LineOf, positions: Mapping[cst.CSTNode, CodeRange]) -> str:
    where = positions.get(ref.node)
    return LINE_LABEL.get()(where.start.line) if where is not None else "?"


def _statement_lines(
    stmt: cst.CSTNode | None, positions: Mapping[cst.CSTNode, CodeRange]
) -> tuple[int, int] | None:
    """The lines a ``# noqa`` may sit on: a simple statement, or a compound one's header."""
    where = positions.get(stmt) if stmt is not None else None
    if where is None:
        return None
    body = getattr(stmt, "body", None)
    if isinstance(stmt, cst.BaseCompoundStatement) and body is not None:
        inner = positions.get(body)
        if inner is not None:
            return (where.start.line, max(where.start.line, inner.start.line - 1))
    return (where.start.line, where.end.line)


def _filter(findings: list[Finding], text: str) -> list[Finding]:
    noqa = noqa_map(text)
    if not noqa:
        return sorted(findings, key=Finding.sort_key)
    kept = []
    for finding in findings:
        first, last = finding.statement_lines or (finding.line, finding.line)
        lines = range(min(first, finding.line), max(last, finding.line) + 1)
        if not suppressed(noqa, finding.code, lines):
            kept.append(finding)
    return sorted(kept, key=Finding.sort_key)

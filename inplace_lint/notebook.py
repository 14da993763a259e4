"""Jupyter notebooks: lint the code cells, report in cells, and write fixes back into them.

The code cells of a notebook (nbformat 4) are joined, in order, into one Python text, each
cell after a marker line ``# inplace-lint: cell N``; the analysis sees that text as a module,
as the notebook runs top to bottom. IPython syntax that is not Python (``%magic``, ``!shell``,
``x = !cmd``, ``obj?``) becomes a ``pass`` placeholder on the same line, and cells that are not
Python (markdown, raw, ``%%bash`` and other non-Python cell magics, another language) are left
out. Findings are mapped back to the cell (numbered from 1 over every cell of the notebook, as
ruff numbers them) and the line in it; a message's line references read "3 of cell 2".

Fixes are made on the joined text by :mod:`inplace_lint.autofix` (verified there), split back
at the markers into cell sources, and written only if the rest of the file is kept byte for
byte: the JSON is written again with the layout it was read with (indent, key order, escapes,
line ends), and the result must read back to the fixed text. Nothing is imported or run.
"""

from __future__ import annotations

import bisect
import codecs
import difflib
import json
import json.decoder
import json.scanner
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from inplace_lint.autofix import Dropped, FileFix, fix_text, verified
from inplace_lint.checks import PARSE_ERROR
from inplace_lint.engine import LINE_LABEL, lint_source
from inplace_lint.finding import Edit, Finding, Fix, Position, Related

SUFFIX = ".ipynb"
#: Cell magics whose body is Python (IPython's own); a cell under any other is left out.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "python", "python3"})
_MARKER = "# inplace-lint: cell {}"
_MARKER_LINE = re.compile(r"^# inplace-lint: cell (\d+)\n", re.M)
_PLACEHOLDER = "pass  # inplace-lint: magic {}"
_PLACEHOLDER_LINE = re.compile(r"^[ \t]*pass  # inplace-lint: magic (\d+)$", re.M)
_NEWLINE = re.compile(r"\r\n|\r|\n")
#: IPython lines that are not Python, at the start of a logical line: ``%magic``, ``!cmd``,
#: ``?obj``, ``x = %magic``, ``a, b = !cmd`` and ``obj?`` / ``obj??``.
_IPYTHON_LINE = re.compile(
    r"[ \t]*(?:[%!?]"
    r"|[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*[%!]"
    r"|[A-Za-z_][\w.]*\?\??[ \t]*$)"
)


def is_notebook(path: str | Path) -> bool:
    """Whether ``path`` names a Jupyter notebook (by its suffix, as ruff decides)."""
    return str(path).lower().endswith(SUFFIX)


class NotebookError(Exception):
    """The file is not a notebook that can be linted; the message says why in one line."""

    def __init__(self, reason: str, where: Position | None = None) -> None:
        super().__init__(reason)
        self.where = where or Position(1, 1)


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class _Cell:
    """A code cell as it appears in the joined text."""

    index: int  # in the notebook's list of cells
    source: str  # the cell's own text
    added_newline: bool  # the joined text ends the cell with a newline its source lacks
    magics: dict[int, str] = field(default_factory=dict)  # placeholder number -> its line


@dataclass
class Notebook:
    """A parsed notebook: its JSON, its code cells and their joined Python text."""

    data: Any
    cells: list[_Cell]
    text: str


def _decode(data: bytes) -> tuple[str, bool]:
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8-sig"), bom
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise NotebookError(f"not UTF-8 (line {line})") from exc


def _load_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = Position(exc.lineno, exc.colno)
        raise NotebookError(f"not valid JSON: {exc.msg}", where) from exc
    except RecursionError as exc:
        raise NotebookError("JSON nested too deeply") from exc


def _source(cell: dict[str, Any], number: int) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    if not isinstance(source, str):
        raise NotebookError(f"not a notebook: cell {number} has a source that is not text")
    return source


def _language(metadata: Any) -> str | None:
    """The notebook's language as its metadata names it, lower-cased; None if unnamed."""
    if not isinstance(metadata, dict):
        return None
    for key, name in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(name), str):
            return str(value[name]).lower()
    return None


def _cell_language(cell: dict[str, Any]) -> str:
    """``metadata.vscode.languageId`` (VS Code's polyglot notebooks), else python."""
    vscode = cell.get("metadata", {})
    vscode = vscode.get("vscode") if isinstance(vscode, dict) else None
    language = vscode.get("languageId") if isinstance(vscode, dict) else None
    return language.lower() if isinstance(language, str) else "python"


def _code_cells(data: Any) -> list[tuple[int, str]]:
    """``(index, source)`` of each Python code cell; raises NotebookError if not a notebook."""
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        version = data.get("nbformat") if isinstance(data, dict) else None
        if isinstance(version, int) and version < 4:
            raise NotebookError(f"not supported: nbformat {version} (convert it to version 4)")
        raise NotebookError("not a notebook: no list of cells")
    if _language(data.get("metadata")) not in (None, "python"):
        return []
    found = []
    for index, cell in enumerate(data["cells"]):
        if not isinstance(cell, dict):
            raise NotebookError(f"not a notebook: cell {index + 1} is not an object")
        if cell.get("cell_type") != "code" or _cell_language(cell) != "python":
            continue
        found.append((index, _source(cell, index + 1)))
    return found


@dataclass
class _Scan:
    """Where a line starts: inside brackets, a string, or a backslash continuation."""

    depth: int = 0
    quote: str | None = None
    continued: bool = False

    @property
    def at_statement(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, line: str) -> None:
        i, end = 0, len(line)
        while i < end:
            char = line[i]
            if self.quote is not None:
                if char == "\\":
                    i += 2
                    continue
                if line.startswith(self.quote, i):
                    i, self.quote = i + len(self.quote), None
                    continue
            elif char == "#":
                break
            elif char in "\"'":
                self.quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else char
                i += len(self.quote)
                continue
            elif char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(self.depth - 1, 0)
            i += 1
        self.continued = line.rstrip("\r\n").endswith("\\")
        if self.quote in ('"', "'") and not self.continued:
            self.quote = None  # an unclosed one-line string ends with its line


def _python_text(source: str, counter: list[int]) -> tuple[str, dict[int, str]] | None:
    """The cell's text with IPython lines replaced by placeholders; None if not Python.

    ``counter`` numbers the placeholders across the notebook.
    """
    lines = source.splitlines(keepends=True) if source else []
    first = lines[0].strip() if lines else ""
    if first.startswith("%%") and first[2:].split(" ")[0] not in PYTHON_CELL_MAGICS:
        return None
    magics: dict[int, str] = {}
    scan, in_magic, out = _Scan(), False, []
    for number, line in enumerate(lines):
        body = line.rstrip("\r\n")
        is_cell_magic = number == 0 and first.startswith("%%")
        if in_magic or is_cell_magic or (scan.at_statement and _IPYTHON_LINE.match(body)):
            counter[0] += 1
            magics[counter[0]] = body
            indent = body[: len(body) - len(body.lstrip(" \t"))]
            out.append(indent + _PLACEHOLDER.format(counter[0]) + line[len(body) :])
            in_magic = body.endswith("\\")
            continue
        scan.feed(line)
        out.append(line)
    return "".join(out), magics


def parse(data: bytes) -> Notebook:
    """Read a notebook's bytes; raises NotebookError with a one-line reason."""
    text, _ = _decode(data)
    notebook = _load_json(text)
    cells: list[_Cell] = []
    parts: list[str] = []
    counter = [0]
    for index, source in _code_cells(notebook):
        python = _python_text(source, counter)
        if python is None:
            continue
        body, magics = python
        added = bool(body) and not body.endswith("\n")
        parts.append(_MARKER.format(index + 1) + "\n" + body + ("\n" if added else ""))
        cells.append(_Cell(index, source, added, magics))
    return Notebook(notebook, cells, "".join(parts))


# --------------------------------------------------------------------------- cells and lines


@dataclass(frozen=True)
class CellIndex:
    """Which cell each line of a joined text belongs to, read from its marker lines."""

    starts: tuple[int, ...]  # the joined line of each cell's first line
    numbers: tuple[int, ...]  # each cell's number (1-based over every cell)

    @classmethod
    def of(cls, text: str) -> CellIndex:
        starts, numbers = [], []
        breaks = [m.end() for m in _NEWLINE.finditer(text)]
        for match in _MARKER_LINE.finditer(text):
            starts.append(bisect.bisect_right(breaks, match.start()) + 2)
            numbers.append(int(match.group(1)))
        return cls(tuple(starts), tuple(numbers))

    def locate(self, line: int) -> tuple[int, int]:
        """The cell and the line in it of a joined line."""
        at = max(bisect.bisect_right(self.starts, line) - 1, 0)
        if not self.starts:
            return 1, line
        return self.numbers[at], max(line - self.starts[at] + 1, 1)

    def position(self, where: Position) -> Position:
        cell, line = self.locate(where.line)
        return Position(line, where.column, cell)

    def label(self, line: int) -> str:
        """How a message names a joined line: ``3 of cell 2``."""
        cell, inner = self.locate(line)
        return f"{inner} of cell {cell}"

    def finding(self, finding: Finding) -> Finding:
        """``finding`` with every position inside its cell."""
        lines = finding.statement_lines
        fix = finding.fix
        if fix is not None:
            edits = tuple(
                Edit(self.position(e.start), self.position(e.end), e.text) for e in fix.edits
            )
            fix = Fix(fix.description, edits, fix.safe)
        return replace(
            finding,
            start=self.position(finding.start),
            end=self.position(finding.end),
            related=tuple(Related(self.position(r.position), r.message) for r in finding.related),
            fix=fix,
            statement_lines=(
                (self.locate(lines[0])[1], self.locate(lines[1])[1]) if lines else None
            ),
        )


def _lint_text(text: str, path: str, codes: Iterable[str] | None) -> list[Finding]:
    """Lint a joined text; findings placed in their cells."""
    index = CellIndex.of(text)
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        where = index.position(Position(line, 1))
        return [_cannot_parse(path, where, "source contains a null byte")]
    token = LINE_LABEL.set(index.label)
    try:
        findings = lint_source(text, path, codes)
    finally:
        LINE_LABEL.reset(token)
    return sorted((index.finding(f) for f in findings), key=Finding.sort_key)


def _verified_text(
    text: str, path: str, codes: Iterable[str] | None
) -> tuple[list[Finding], list[Dropped]]:
    """Lint a joined text and keep only verified fixes; findings placed in their cells."""
    index = CellIndex.of(text)
    token = LINE_LABEL.set(index.label)
    try:
        found, dropped = verified(text, path, lint_source(text, path, codes), codes)
    finally:
        LINE_LABEL.reset(token)
    placed = sorted((index.finding(f) for f in found), key=Finding.sort_key)
    return placed, [Dropped(index.finding(d.finding), d.reason) for d in dropped]


def verified_notebook(data: bytes, path: str, codes: Iterable[str] | None) -> list[Finding]:
    """A notebook's findings with only the fixes that pass verification (ValueError when the
    bytes are not a notebook)."""
    try:
        notebook = parse(data)
    except NotebookError as exc:
        raise ValueError(str(exc)) from exc
    if "\x00" in notebook.text:
        return _lint_text(notebook.text, path, codes)
    return _verified_text(notebook.text, path, codes)[0]


def _cannot_parse(path: str, where: Position, reason: str) -> Finding:
    return Finding(path, where, where, PARSE_ERROR, f"cannot parse: {' '.join(reason.split())}")


def lint_notebook(data: bytes, path: str, codes: Iterable[str] | None = None) -> list[Finding]:
    """Lint a notebook's code cells; a file that is not a notebook gives one IPL999."""
    try:
        notebook = parse(data)
    except NotebookError as exc:
        return [_cannot_parse(path, exc.where, str(exc))]
    return _lint_text(notebook.text, path, codes)


# --------------------------------------------------------------------------- fixing


class _Unmappable(Exception):
    """A fixed text that cannot be split back into the notebook's cells."""


def _split(text: str, cells: Sequence[_Cell]) -> list[str]:
    """Each cell's source in a joined text (magics restored); raises _Unmappable."""
    marks = list(_MARKER_LINE.finditer(text))
    if [int(m.group(1)) for m in marks] != [c.index + 1 for c in cells] or (
        marks and marks[0].start() != 0
    ):
        raise _Unmappable("the cell markers moved")
    sources = []
    for mark, after, cell in zip(marks, [*marks[1:], None], cells, strict=True):
        body = text[mark.end() : after.start() if after is not None else len(text)]
        if cell.added_newline:
            if not body.endswith("\n"):
                raise _Unmappable("a cell lost its last line end")
            body = body[:-1]
        seen: list[int] = []

        def restore(match: re.Match[str], cell: _Cell = cell, seen: list[int] = seen) -> str:
            number = int(match.group(1))
            if number not in cell.magics:
                raise _Unmappable("a placeholder moved to another cell")
            seen.append(number)
            return cell.magics[number]

        body = _PLACEHOLDER_LINE.sub(restore, body)
        if sorted(seen) != sorted(cell.magics):
            raise _Unmappable("an IPython line was lost")
        sources.append(body)
    return sources


@dataclass(frozen=True)
class _Layout:
    """The ``json.dumps`` settings, and line ends, that wrote a notebook's text."""

    indent: int | str | None
    separators: tuple[str, str]
    ensure_ascii: bool
    final_newline: bool
    crlf: bool

    def dumps(self, data: Any) -> str:
        text = json.dumps(
            data, indent=self.indent, separators=self.separators, ensure_ascii=self.ensure_ascii
        )
        text += "\n" if self.final_newline else ""
        return text.replace("\n", "\r\n") if self.crlf else text


def _layout(text: str, data: Any) -> _Layout | None:
    """The layout that writes ``data`` back as exactly ``text``, if there is one."""
    crlf = "\r\n" in text
    body = text.replace("\r\n", "\n") if crlf else text
    final_newline = body.endswith("\n")
    body = body.removesuffix("\n")
    candidates: list[tuple[int | str | None, tuple[str, str]]]
    if "\n" in body:
        second = body.split("\n", 2)[1]
        indent = second[: len(second) - len(second.lstrip(" \t"))]
        candidates = [(len(indent) if indent.strip(" ") == "" else indent, (",", ": "))]
    else:
        candidates = [(None, (", ", ": ")), (None, (",", ":"))]
    for indent_, separators in candidates:
        layout = _Layout(indent_, separators, body.isascii(), final_newline, crlf)
        if layout.dumps(data) == text:
            return layout
    return None


def _without_sources(data: Any, cells: Sequence[_Cell]) -> Any:
    copy = json.loads(json.dumps(data))
    for cell in cells:
        copy["cells"][cell.index]["source"] = None
    return copy


def _rewrite(data: bytes, notebook: Notebook, fixed: str) -> bytes:
    """The notebook's bytes with the cells of ``fixed``; raises _Unmappable if unsafe."""
    text, bom = _decode(data)
    layout = _layout(text, notebook.data)
    if layout is None:
        raise _Unmappable("its JSON layout cannot be written back byte for byte")
    new_data = json.loads(text)
    for cell, source in zip(notebook.cells, _split(fixed, notebook.cells), strict=True):
        if source == cell.source:
            continue
        old = new_data["cells"][cell.index]["source"]
        new_data["cells"][cell.index]["source"] = (
            source.splitlines(keepends=True) if isinstance(old, list) else source
        )
    new = (codecs.BOM_UTF8 if bom else b"") + layout.dumps(new_data).encode("utf-8")
    again = parse(new)
    if again.text != fixed or _without_sources(again.data, again.cells) != _without_sources(
        notebook.data, notebook.cells
    ):
        raise _Unmappable("the written notebook does not read back as fixed")
    return new


def fix_notebook(
    data: bytes, path: str, codes: Iterable[str] | None = None, unsafe: bool = False
) -> tuple[FileFix, bytes]:
    """Fix a notebook's bytes; the outcome (texts are joined cells) and the new bytes."""
    try:
        notebook = parse(data)
    except NotebookError as exc:
        return FileFix(path, error=f"{path}: not fixed: {exc}"), data
    result = fix_text(notebook.text, path, codes, unsafe)
    if not result.changed:
        result.remaining, result.dropped = _verified_text(notebook.text, path, codes)
        return result, data
    try:
        new = _rewrite(data, notebook, result.after)
    except (_Unmappable, NotebookError) as exc:
        result.error = f"{path}: not fixed: {exc}"
        result.after, result.applied = result.before, []
        result.remaining, result.dropped = _verified_text(notebook.text, path, codes)
        return result, data
    result.remaining, result.dropped = _verified_text(result.after, path, codes)
    return result, new


def unified_diff(path: str, before: str, after: str) -> str:
    """A fix of a notebook as one ``diff -u`` per changed cell, headed ``a/nb.ipynb:cell 3``."""
    old_index, new_index = CellIndex.of(before), CellIndex.of(after)
    if old_index.numbers != new_index.numbers:
        return ""
    out = []
    chunks = zip(_chunks(before), _chunks(after), old_index.numbers, strict=True)
    for old, new, number in chunks:
        if old == new:
            continue
        lines = difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a/{path}:cell {number}",
            f"b/{path}:cell {number}",
        )
        out.extend(line if line.endswith("\n") else line + "\n" for line in lines)
    return "".join(out)


def _chunks(text: str) -> list[str]:
    """The cells of a joined text as they read in the notebook (placeholders shown as such)."""
    marks = list(_MARKER_LINE.finditer(text))
    return [
        text[mark.end() : after.start() if after is not None else len(text)]
        for mark, after in zip(marks, [*marks[1:], None], strict=True)
    ]


# --------------------------------------------------------------------------- file positions


class _Located(str):
    """A JSON string value that knows the offset of its opening quote in the document."""

    offset: int


def _located_loads(text: str) -> Any:
    """``json.loads`` whose string values are :class:`_Located` (pure-Python scanner)."""
    decoder = json.JSONDecoder()

    def parse_string(s: str, end: int, strict: bool) -> tuple[str, int]:
        value, after = json.decoder.scanstring(s, end, strict)
        located = _Located(value)
        located.offset = end - 1
        return located, after

    decoder.parse_string = parse_string  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    return decoder.decode(text)


def _raw_offset(text: str, quote: int, count: int) -> int:
    """The offset in ``text`` of character ``count`` of the JSON string opening at ``quote``."""
    at = quote + 1
    for _ in range(count):
        if text[at] != "\\":
            at += 1
        elif text[at + 1] != "u":
            at += 2
        else:
            high = int(text[at + 2 : at + 6], 16)
            at += 6
            pair = 0xD800 <= high < 0xDC00 and text.startswith("\\u", at)
            if pair and 0xDC00 <= int(text[at + 2 : at + 6], 16) < 0xE000:
                at += 6  # a surrogate pair is one character
    return at


class _FileMap:
    """Cell positions of one notebook as positions in its file (the JSON text's lines)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cells = _located_loads(text)["cells"]
        self.line_starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def place(self, where: Position, end: bool = False) -> Position | None:
        """The file position of a cell position; an ``end`` at a string's boundary stays in
        the string before it."""
        if where.cell is None or where.cell < 1:
            return None
        source = self.cells[where.cell - 1]["source"]
        pieces = [source] if isinstance(source, str) else list(source)
        if not pieces or not all(isinstance(p, _Located) for p in pieces):
            return None
        joined = "".join(pieces)
        starts = [0, *(m.end() for m in _NEWLINE.finditer(joined))]
        if where.line > len(starts):
            return None
        offset = min(starts[where.line - 1] + where.column - 1, len(joined))
        bounds = [0]
        for piece in pieces:
            bounds.append(bounds[-1] + len(piece))
        pick = bisect.bisect_left if end else bisect.bisect_right
        at = min(max(pick(bounds, offset) - 1, 0), len(pieces) - 1)
        raw = _raw_offset(self.text, pieces[at].offset, offset - bounds[at])
        line = bisect.bisect_right(self.line_starts, raw)
        return Position(line, raw - self.line_starts[line - 1] + 1)


def _file_map(path: str, lines_of: Callable[[str], Sequence[str] | None] | None) -> _FileMap | None:
    try:
        lines = lines_of(path) if lines_of is not None else None
        if lines is None:
            lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
        return _FileMap("\n".join(lines))
    except (OSError, ValueError, RecursionError, KeyError, TypeError, IndexError):
        return None


def placed_in_file(
    findings: Iterable[Finding], lines_of: Callable[[str], Sequence[str] | None] | None = None
) -> list[Finding]:
    """Notebook findings at their lines in the ``.ipynb`` file itself, for SARIF, GitHub and
    LSP output, which address a file's lines, not its cells.

    Each message starts with ``cell 3, line 2:``; fixes are left out (their edits are in cell
    coordinates: ``--fix`` applies them). A position that cannot be found in the file (it
    changed, or its source is not stored as JSON strings) falls back to line 1, column 1.
    """
    maps: dict[str, _FileMap | None] = {}
    out = []
    for finding in findings:
        if finding.start.cell is None:
            out.append(finding)
            continue
        if finding.path not in maps:
            maps[finding.path] = _file_map(finding.path, lines_of)
        out.append(_on_disk(finding, maps[finding.path]))
    return out


def _on_disk(finding: Finding, where: _FileMap | None) -> Finding:
    def place(position: Position, end: bool = False) -> Position | None:
        try:
            return where.place(position, end) if where is not None else None
        except (IndexError, KeyError, TypeError, ValueError):
            return None

    start = place(finding.start) or Position(1, 1)
    end = place(finding.end, end=True)
    cell, line = finding.start.cell, finding.start.line
    return replace(
        finding,
        start=start,
        end=end if end is not None and end >= start else start,
        message=f"cell {cell}, line {line}: {finding.message}",
        related=tuple(
            Related(
                place(r.position) or Position(1, 1),
                f"cell {r.position.cell}, line {r.position.line}: {r.message}",
            )
            for r in finding.related
        ),
        fix=None,
        statement_lines=None,
    )

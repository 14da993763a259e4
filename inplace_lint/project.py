"""Project mode: what the files of one run tell each other about their helper functions.

When a run names several files, a file that imports a function defined at the top level of
another file of the run (``from .utils import add_noise``, ``from pkg.ops import f as g``,
following re-exports of ``__init__`` files) and calls it gets that function's source with its
analysis: its in-place writes to its parameters are summarised there and applied at each call,
so a caller that reads its tensor again, or whose tensor an op saved, is reported at the call.
The defining file learns that the function has a caller in the run that judges it, so it does
not report the write for want of a caller (IPL004's "no caller to judge").

The index reads source text only (no parse of whole files, no import): imports and top-level
``def`` lines are found by their layout, and each shipped function is checked to parse alone.
The grad mode of the calls is carried too (``project_modes.py``): a helper that every call of
the run makes under ``no_grad`` runs without grad in its own file, as one called so within it.

A module class is shipped the same way where the importing file builds an instance and calls
it (``self.enc = Encoder(...)`` and ``self.enc(x)``): its ``forward``'s writes to its parameters
act at each call of an instance, and the defining file learns that ``Encoder.forward`` is
judged there.

Limits: top-level functions and classes, summarised where called by their imported name (not
``module.f(...)``, whose grad mode alone is carried); a class's ``forward`` alone (not the
methods it calls), and only where the importing file names the instance it calls.
"""

from __future__ import annotations

import ast
import re
import stat
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from inplace_lint.engine import MAX_BYTES
from inplace_lint.project_modes import CallKey, call_modes, parse
from inplace_lint.project_view import ForeignFunction, ProjectView
from inplace_lint.source import DecodeError, decode

#: ``from .a.b import (x, y as z)``: the dots, the module, the names (to the line's end or a
#: closing parenthesis)
_FROM_IMPORT = re.compile(
    r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE
)
#: ``import a.b as m``: the module and its alias
_IMPORT_AS = re.compile(r"^[ \t]*import[ \t]+([\w.]+)[ \t]+as[ \t]+(\w+)[ \t]*$", re.MULTILINE)
_TOP_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.MULTILINE)
_TOP_CLASS = re.compile(r"^class[ \t]+(\w+)[ \t]*[(:]", re.MULTILINE)
_TOP_LEVEL_LINE = re.compile(r"^[^\s#]", re.MULTILINE)
#: a sign that a body may write in place: ``.add_(``, an augmented assignment, an item
#: assignment, ``out=``, ``.data``, an ``inplace`` flag
_MAY_WRITE = re.compile(r"\w_\(|[-+*/%&|^@]=|\][ \t]*=[^=]|\bout[ \t]*=|\.data\b|inplace")
#: how many ``__init__`` re-exports are followed to the defining file
_HOPS = 3


@dataclass
class _File:
    text: str
    package: tuple[str, ...]  # the dotted package this file belongs to
    #: local name -> (module parts, relative dots, imported name)
    imported: dict[str, tuple[tuple[str, ...], int, str]] = field(default_factory=dict)
    defs: dict[str, int] = field(default_factory=dict)  # top-level function -> its offset
    classes: dict[str, int] = field(default_factory=dict)  # top-level class -> its offset
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)  # ``import a.b as m``
    #: its top-level import lines, once one of its functions is shipped
    imports: str | None = None


def build_views(files: Sequence[tuple[Path, str]]) -> dict[int, ProjectView]:
    """Each file's view of the others, by position in ``files``; empty for one file alone."""
    read = [_read(path) for path, _ in files]
    if sum(f is not None for f in read) < 2:
        return {}
    modules: dict[tuple[str, ...], int] = {}
    clash: set[tuple[str, ...]] = set()
    for index, f in enumerate(read):
        if f is None:
            continue
        for key in _module_keys(files[index][0], f.package):
            if key in modules and modules[key] != index:
                clash.add(key)
            modules[key] = index
    for key in clash:
        del modules[key]
    return _Resolver(files, read, modules).views()


class _Resolver:
    def __init__(
        self,
        files: Sequence[tuple[Path, str]],
        read: list[_File | None],
        modules: dict[tuple[str, ...], int],
    ) -> None:
        self.files, self.read, self.modules = files, read, modules
        self.by_path = {path: index for index, (path, _) in enumerate(files)}
        self._shipped: dict[tuple[int, str], ForeignFunction | None] = {}

    def views(self) -> dict[int, ProjectView]:
        foreign: dict[int, list[ForeignFunction]] = {}
        called: dict[int, set[str]] = {}
        modes: dict[int, dict[str, set[bool]]] = {}
        for index, f in enumerate(self.read):
            if f is None:
                continue
            targets: list[tuple[CallKey, tuple[int, str]]] = []
            for local, (parts, dots, name) in sorted(f.imported.items()):
                if not _called(f.text, local):
                    continue
                target = self._module(index, parts, dots)
                found = self._defining(target, name, _HOPS) if target is not None else None
                if found is None or found[0] == index:
                    continue
                is_class = found[1] not in self._file(found[0]).defs
                if is_class and not _instance_called(f.text, local):
                    continue
                shipped = self._ship(found, local)
                if shipped is not None:
                    foreign.setdefault(index, []).append(shipped)
                    called.setdefault(found[0], set()).add(
                        f"{found[1]}.forward" if is_class else found[1]
                    )
                    if not is_class:
                        targets.append(((local,), found))
            targets += self._through_aliases(index, f)
            for (name, where), seen in _modes_of(f.text, targets).items():
                modes.setdefault(where, {}).setdefault(name, set()).update(seen)
        return {
            index: ProjectView(
                tuple(foreign.get(index, ())),
                frozenset(called.get(index, ())),
                tuple(sorted((n, tuple(sorted(m))) for n, m in modes.get(index, {}).items())),
            )
            for index in foreign.keys() | called.keys() | modes.keys()
        }

    def _through_aliases(self, index: int, f: _File) -> list[tuple[CallKey, tuple[int, str]]]:
        """``utils.f(...)`` for a module of the run bound to ``utils`` (``import a.utils as
        utils``, ``from a import utils``): each such call of a function that may write."""
        found: list[tuple[CallKey, tuple[int, str]]] = []
        bound = {alias: (parts, 0) for alias, parts in f.aliases.items()}
        bound.update({local: ((*p, n), d) for local, (p, d, n) in f.imported.items()})
        for alias, (parts, dots) in sorted(bound.items()):
            if f"{alias}." not in f.text:
                continue
            target = self._module(index, parts, dots)
            module = self.read[target] if target is not None and target != index else None
            if module is None or target is None:
                continue
            for name in module.defs:
                if f"{alias}.{name}(" in f.text and self._ship((target, name), name):
                    found.append(((alias, name), (target, name)))
        return found

    def _file(self, index: int) -> _File:
        f = self.read[index]
        assert f is not None
        return f

    def _module(self, index: int, parts: tuple[str, ...], dots: int) -> int | None:
        """The file of the run a module name in file ``index`` names, if exactly one."""
        f = self.read[index]
        assert f is not None
        if dots:  # ``from ..a import f``: from the package ``dots - 1`` levels up
            up = dots - 1
            if up > len(f.package):
                return None
            key = (*f.package[: len(f.package) - up], *parts)
            return self.modules.get(key) if key else None
        # ``import utils`` in a script: the file beside it (its folder is first on sys.path)
        if not parts:
            return None
        folder = self.files[index][0].parent
        beside = self.by_path.get(folder.joinpath(*parts[:-1], f"{parts[-1]}.py"))
        if beside is not None and self.read[beside] is not None:
            return beside
        return self.modules.get(parts)

    def _defining(self, index: int, name: str, hops: int) -> tuple[int, str] | None:
        """The file and name that define ``name`` (a function or class) as file ``index``
        exports it."""
        f = self._file(index)
        if name in f.defs or name in f.classes:
            return index, name
        entry = f.imported.get(name)
        if entry is None or hops == 0:
            return None
        parts, dots, original = entry
        target = self._module(index, parts, dots)
        return self._defining(target, original, hops - 1) if target is not None else None

    def _ship(self, found: tuple[int, str], local: str) -> ForeignFunction | None:
        """The definition ``found`` as a file calling it ``local`` receives it, if it may
        write in place and can be cut out of its file alone."""
        if found not in self._shipped:
            self._shipped[found] = self._cut(*found)
        shipped = self._shipped[found]
        return replace(shipped, local=local) if shipped is not None else None

    def _cut(self, index: int, name: str) -> ForeignFunction | None:
        f = self._file(index)
        kind = "function" if name in f.defs else "class"
        offset = f.defs[name] if kind == "function" else f.classes[name]
        defined = _definition(f.text, offset)
        if defined is None:
            return None
        source, node = defined
        writer = source if kind == "function" else _forward_of(source, node)
        if writer is None or not _MAY_WRITE.search(writer):
            return None
        line = f.text.count("\n", 0, offset) + 1
        if f.imports is None:
            f.imports = "\n".join(_import_lines(f.text))
        return ForeignFunction(name, name, self.files[index][1], line, source, f.imports, kind)


def _read(path: Path) -> _File | None:
    if path.suffix != ".py":
        return None
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None  # a FIFO would block; the engine reports both
        text = decode(path.read_bytes()).text
    except (OSError, DecodeError):
        return None
    f = _File(text, _package_of(path))
    for match in _FROM_IMPORT.finditer(text):
        dots, module, names = match.groups()
        parts = tuple(module.split(".")) if module else ()
        for imported, local in _names(names):
            f.imported[local] = (parts, len(dots), imported)
    for match in _IMPORT_AS.finditer(text):
        f.aliases[match.group(2)] = tuple(match.group(1).split("."))
    for match in _TOP_DEF.finditer(text):
        f.defs.setdefault(match.group(1), match.start())
    for match in _TOP_CLASS.finditer(text):
        if match.group(1) not in f.defs:
            f.classes.setdefault(match.group(1), match.start())
    return f


def _modes_of(
    text: str, targets: list[tuple[CallKey, tuple[int, str]]]
) -> dict[tuple[str, int], set[bool]]:
    """The grad modes of the calls ``text`` makes to each target, keyed by (the target's
    name, its file). A file that never names a grad-off context calls everything with grad
    on, and is not parsed."""
    if not targets:
        return {}
    if "no_grad" in text or "inference_mode" in text:
        tree = parse(text)
        if tree is None:
            return {}
        seen = call_modes(tree)
    else:
        seen = {key: {True} for key, _ in targets}
    out: dict[tuple[str, int], set[bool]] = {}
    for key, (where, name) in targets:
        if key in seen:
            out.setdefault((name, where), set()).update(seen[key])
    return out


def _names(text: str) -> Iterable[tuple[str, str]]:
    """``(a, b as c)`` -> (a, a), (b, c); comments and line continuations dropped."""
    text = re.sub(r"#[^\n]*", "", text).strip().strip("()").replace("\\\n", " ")
    for item in text.split(","):
        words = item.split()
        if len(words) == 1 and words[0].isidentifier():
            yield words[0], words[0]
        elif len(words) == 3 and words[1] == "as" and words[2].isidentifier():
            yield words[0], words[2]


def _package_of(path: Path) -> tuple[str, ...]:
    """The dotted package of ``path``: its folders up to the first without ``__init__.py``."""
    parts: list[str] = []
    folder = path.resolve().parent
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        if folder.parent == folder:
            break
        folder = folder.parent
    return tuple(parts)


def _module_keys(path: Path, package: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The module names the file answers to: its full dotted name, and the dotted names
    below each of its packages (``src/pkg/a/b.py`` is ``pkg.a.b``, and ``a.b`` to a script
    run from ``pkg/``)."""
    stem = () if path.stem == "__init__" else (path.stem,)
    full = (*package, *stem)
    return [full[i:] for i in range(len(package) + 1) if full[i:]]


def _called(text: str, local: str) -> bool:
    """Whether ``local(`` appears as a plain call (not ``obj.local(`` or ``my_local(``)."""
    start = text.find(local + "(")
    while start >= 0:
        before = text[start - 1] if start else " "
        if not (before.isalnum() or before in "_."):
            return True
        start = text.find(local + "(", start + 1)
    return False


def _instance_called(text: str, local: str) -> bool:
    """Whether ``text`` binds an instance of the class ``local`` to a name or attribute and
    calls it (``self.enc = Encoder(...)`` ... ``self.enc(x)``)."""
    assigned = re.compile(
        rf"^[ \t]*([\w.]+)[ \t]*(?::[^=\n]+)?=[ \t]*{re.escape(local)}[ \t]*\(", re.MULTILINE
    )
    return any(_called(text, m.group(1)) for m in assigned.finditer(text))


def _forward_of(source: str, node: ast.stmt) -> str | None:
    """The source of the ``forward`` method of the class ``node`` (parsed from ``source``)
    defines, if any."""
    lines = source.splitlines(keepends=True)
    for statement in node.body if isinstance(node, ast.ClassDef) else ():
        if isinstance(statement, ast.FunctionDef) and statement.name == "forward":
            return "".join(lines[statement.lineno - 1 : statement.end_lineno])
    return None


def _definition(text: str, offset: int) -> tuple[str, ast.stmt] | None:
    """The top-level ``def`` or ``class`` at ``offset`` with its decorators, if it parses on
    its own, and its tree."""
    start = offset
    while start > 0:
        previous = text.rfind("\n", 0, start - 1) + 1
        if not text.startswith("@", previous):
            break
        start = previous
    line_end = text.find("\n", offset)
    following = _TOP_LEVEL_LINE.search(text, line_end + 1) if line_end >= 0 else None
    end = len(text)
    while following is not None:  # a decorator opens the next definition; a ``)`` closes ours
        if text[following.start()] not in ")]}":
            end = following.start()
            break
        following = _TOP_LEVEL_LINE.search(text, following.end())
    source = text[start:end].rstrip() + "\n"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body = tree.body
    defined = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    if len(body) != 1 or not isinstance(body[0], defined):
        return None
    return source, body[0]


def _import_lines(text: str) -> list[str]:
    """The file's top-level import statements (one line each: enough for torch's names)."""
    lines = []
    for match in re.finditer(r"^(?:import|from)[ \t][^\n(\\]*$", text, re.MULTILINE):
        lines.append(match.group(0))
    return lines

"""Apply the fixes that :mod:`inplace_lint.fix` attached: verify, diff and write atomically.

A round applies every applicable fix whose edits do not touch another's, then re-parses and
re-lints the result. The round is kept only if the text still parses, every fixed finding is
gone and no finding appears that was not there before (positions are mapped through the
edits); otherwise the fixes are tried one at a time. Rounds repeat until nothing changes, so a
second run changes nothing. Text outside the edits is never touched: the file is decoded once
(BOM and PEP 263 encoding kept) and re-encoded only if that round-trips byte for byte.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import difflib
import functools
import itertools
import os
import re
import stat
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from inplace_lint.atomic import replace_file
from inplace_lint.checks import PARSE_ERROR
from inplace_lint.config import Config
from inplace_lint.engine import FileResult, lint_bytes, lint_source
from inplace_lint.finding import Edit, Finding, Position
from inplace_lint.project import build_views
from inplace_lint.project_view import ProjectView
from inplace_lint.source import DecodeError, decode

__all__ = [
    "Dropped",
    "FileFix",
    "FixReport",
    "applicable",
    "apply_edits",
    "fix_bytes",
    "fix_file",
    "fix_results",
    "fix_text",
    "unified_diff",
    "verified",
    "verify",
    "verify_results",
]

_NEWLINE = re.compile(r"\r\n|\r|\n")
MAX_ROUNDS = 10

#: Why a fix failed verification (each a phrase that ends a line of the report).
NO_PLACE = "its edits overlap or fall outside the file"
NO_CHANGE = "it changes nothing"
NO_PARSE = "the fixed file would not parse"
NO_ANALYSIS = "the fixed file could not be analysed"
STILL_THERE = "the finding would still be there"
ADDS = "it would add a finding"
UNCOVERS = "it uncovers a finding that has no verified fix"

#: Analyses one text of the file being fixed (``lint_source`` with its path and codes).
Lint = Callable[[str], list[Finding]]


@dataclass
class FileFix:
    """The outcome of fixing one file."""

    path: str
    before: str = ""
    after: str = ""
    #: The findings whose fixes were applied.
    applied: list[Finding] = field(default_factory=list)
    #: The findings of the fixed text (of the original when nothing was applied).
    remaining: list[Finding] = field(default_factory=list)
    #: A one-line reason the file was left alone or could not be written.
    error: str | None = None
    written: bool = False
    #: The fixes that failed verification (taken off ``remaining``), with the reasons.
    dropped: list[Dropped] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.after != self.before


def applicable(finding: Finding, unsafe: bool) -> bool:
    """A finding whose fix may be applied under the current ``--unsafe-fixes`` setting."""
    return finding.fix is not None and (finding.fix.safe or unsafe)


# --------------------------------------------------------------------------- text edits


def _line_starts(text: str) -> list[int]:
    return [0, *(match.end() for match in _NEWLINE.finditer(text))]


def _offset(starts: list[int], text: str, position: Position) -> int:
    if not 1 <= position.line <= len(starts) or position.column < 1:
        raise ValueError(f"position {position} outside the text")
    offset = starts[position.line - 1] + position.column - 1
    limit = starts[position.line] if position.line < len(starts) else len(text)
    if offset > limit:
        raise ValueError(f"position {position} outside line {position.line}")
    return offset


def _position(starts: list[int], offset: int) -> Position:
    line = bisect.bisect_right(starts, offset)
    return Position(line, offset - starts[line - 1] + 1)


def _spans(text: str, edits: Iterable[Edit]) -> list[tuple[int, int, str]]:
    starts = _line_starts(text)
    spans = []
    for edit in edits:
        begin, end = _offset(starts, text, edit.start), _offset(starts, text, edit.end)
        if end < begin:
            raise ValueError(f"edit ends before it starts: {edit}")
        spans.append((begin, end, edit.text))
    spans.sort(key=lambda span: (span[0], span[1]))
    for (_, end, _), (begin, _, _) in itertools.pairwise(spans):
        if begin < end:
            raise ValueError("overlapping edits")
    return spans


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with ``edits`` (1-based, end exclusive, non-overlapping) applied."""
    out: list[str] = []
    cursor = 0
    for begin, end, new in _spans(text, edits):
        out.append(text[cursor:begin])
        out.append(new)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def _shift(spans: Sequence[tuple[int, int, str]], offset: int) -> int:
    """Where ``offset`` of the old text lands in the new one (inserts at it come before it)."""
    moved = offset
    for begin, end, new in spans:
        if end <= offset:
            moved += len(new) - (end - begin)
        elif begin < offset:
            return moved - (offset - begin)  # inside a replaced span: its start
    return moved


# --------------------------------------------------------------------------- fixing text


def _parses(text: str) -> bool:
    """Python's own parser accepts ``text`` (libcst's, where the analysis needs it, reports
    through the lint as IPL999)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


_Key = tuple[str, Position]


@dataclass
class _Round:
    """The text and findings after one round of fixes, and how old positions moved."""

    text: str
    findings: list[Finding]
    move: Callable[[_Key], _Key]


def _key(finding: Finding) -> _Key:
    return finding.code, finding.start


def _try_round(text: str, chosen: list[Finding], lint: Lint) -> _Round | str:
    """Apply ``chosen``; the round if the result parses and every chosen finding is gone,
    else why not (one line)."""
    edits = [edit for finding in chosen for edit in finding.fix.edits]  # type: ignore[union-attr]
    try:
        spans = _spans(text, edits)
        new_text = apply_edits(text, edits)
    except ValueError:
        return NO_PLACE
    if new_text == text:
        return NO_CHANGE
    if not _parses(new_text):
        return NO_PARSE
    new_findings = lint(new_text)
    if any(f.code == PARSE_ERROR for f in new_findings):
        return NO_ANALYSIS
    old_starts, new_starts = _line_starts(text), _line_starts(new_text)

    def move(key: _Key) -> _Key:
        offset = _shift(spans, _offset(old_starts, text, key[1]))
        return key[0], _position(new_starts, offset)

    now = {_key(f) for f in new_findings}
    if any(move(_key(f)) in now for f in chosen):
        return STILL_THERE
    return _Round(new_text, new_findings, move)


def verify(
    text: str,
    findings: Sequence[Finding],
    chosen: list[Finding],
    lint: Lint,
    unsafe: bool | None = None,
) -> str | None:
    """Why applying the fixes of ``chosen`` together to ``text`` fails verification, or None.

    A verified fix leaves a text that parses and is analysed, in which the fixed findings are
    gone and no finding is left that ``findings`` (the text's own) did not hold; a second run
    then finds nothing of it to fix. A finding the fix uncovers (one an earlier write hid:
    only the first write to a saved tensor is reported) counts as added unless its own fixes
    take it away in further rounds, as ``--fix`` would apply them: safe ones only, unless
    ``unsafe`` (default: when one of ``chosen`` is unsafe).
    """
    outcome = _verified_round(text, findings, chosen, lint, unsafe)
    return outcome if isinstance(outcome, str) else None


def _verified_round(
    text: str,
    findings: Sequence[Finding],
    chosen: list[Finding],
    lint: Lint,
    unsafe: bool | None = None,
) -> _Round | str:
    """:func:`verify`, returning the round that applies ``chosen`` when it passes."""
    outcome = _try_round(text, chosen, lint)
    if isinstance(outcome, str):
        return outcome
    fixed = {_key(f) for f in chosen}
    kept = {outcome.move(_key(f)) for f in findings if _key(f) not in fixed}
    if unsafe is None:
        unsafe = any(f.fix is not None and not f.fix.safe for f in chosen)
    return _absorbs(outcome, kept, unsafe, lint) or outcome


def _absorbs(outcome: _Round, kept: set[_Key], unsafe: bool, lint: Lint) -> str | None:
    """None when no finding of ``outcome`` is new (outside ``kept``) once the new ones' own
    fixes are applied, round after round; else the phrase that says which stays."""
    for _ in range(MAX_ROUNDS):
        added = [f for f in outcome.findings if _key(f) not in kept]
        if not added:
            return None
        first = added[0]
        why = f"{ADDS} ({first.code} on line {first.start.line})"
        if not all(applicable(f, unsafe) for f in added):
            return why
        following = _try_round(outcome.text, _disjoint(added, outcome.text), lint)
        if isinstance(following, str):
            return why
        kept = {following.move(k) for k in kept}
        outcome = following
    return ADDS


@dataclass(frozen=True)
class Dropped:
    """A finding whose fix failed verification, and why."""

    finding: Finding
    reason: str

    def line(self) -> str:
        """``path:line:col: CODE description: reason``."""
        f = self.finding
        description = f.fix.description if f.fix is not None else ""
        return f"{f.path}:{f.start.line}:{f.start.column}: {f.code} {description}: {self.reason}"


def verified(
    text: str,
    path: str,
    findings: Sequence[Finding],
    codes: Iterable[str] | None = None,
    *,
    lint: Lint | None = None,
    only: Collection[Finding] | None = None,
    together: bool = False,
) -> tuple[list[Finding], list[Dropped]]:
    """``findings`` of ``text`` where every fix that fails :func:`verify` by itself (as an
    editor's quick fix applies it) is taken off.

    ``lint`` analyses a text (default: ``lint_source`` with ``codes``); the language server
    passes one that reuses its parse. ``only`` limits the check to those findings (the others
    keep their fixes as they are). ``together`` first tries the fixes that touch no other in
    one round and keeps them all when it passes, halving a failing round (a few analyses
    instead of one per fix: the command line's reports and the language server's check
    before it publishes; an editor's quick fix is checked alone). The limit: a fix that
    passes only beside another (it uncovers a hazard the other's fix removes) is kept.
    """
    fixable = [f for f in findings if f.fix is not None and (only is None or f in only)]
    if not fixable:
        return list(findings), []
    if lint is None:
        enabled = frozenset(codes) if codes is not None else None
        lint = functools.partial(_lint_text, path=path, codes=enabled)
    good: set[int] = set()
    reasons: dict[int, str] = {}

    def passes(group: list[Finding]) -> bool:
        why = verify(text, findings, group, lint)
        if why is None:
            good.update(id(f) for f in group)
        elif len(group) == 1:
            reasons[id(group[0])] = why
        return why is None

    if together:
        _halving(_disjoint(fixable, text), passes)
    for finding in fixable:
        if id(finding) not in good and id(finding) not in reasons:
            passes([finding])
    kept = [f if id(f) not in reasons else replace(f, fix=None) for f in findings]
    return kept, [Dropped(f, reasons[id(f)]) for f in findings if id(f) in reasons]


def _halving(group: list[Finding], passes: Callable[[list[Finding]], bool]) -> None:
    """Verify ``group`` together with ``passes``; where it fails, each half in turn, down to
    single fixes: a file with hundreds of fixes costs a few analyses, not one per fix."""
    if not group or passes(group) or len(group) == 1:
        return
    middle = len(group) // 2
    _halving(group[:middle], passes)
    _halving(group[middle:], passes)


def _lint_text(
    text: str,
    path: str,
    codes: frozenset[str] | None,
    project: ProjectView | None = None,
    assume_grad: bool = False,
) -> list[Finding]:
    return lint_source(text, path, codes, project=project, assume_grad=assume_grad)


def _disjoint(findings: Sequence[Finding], text: str) -> list[Finding]:
    """A first-come selection of findings whose fixes touch no other selected fix."""
    starts = _line_starts(text)
    taken: list[tuple[int, int]] = []
    chosen = []
    for finding in findings:
        assert finding.fix is not None
        try:
            spans = [
                (_offset(starts, text, e.start), _offset(starts, text, e.end))
                for e in finding.fix.edits
            ]
        except ValueError:
            continue
        if any(b <= e2 and b2 <= e for b, e in spans for b2, e2 in taken):
            continue
        taken.extend(spans)
        chosen.append(finding)
    return chosen


def _identity(finding: Finding) -> tuple[str, str, str]:
    """A finding and its fix, whatever line earlier rounds moved it to."""
    assert finding.fix is not None
    return (finding.code, finding.fix.description, finding.message)


def _passing(
    text: str,
    findings: list[Finding],
    candidates: list[Finding],
    lint: Lint,
    rejected: dict[tuple[str, str, str], str],
    unsafe: bool,
) -> dict[int, tuple[_Round, list[Finding]]]:
    """The candidates whose fix passes verification, each (by ``id``) with a round that
    applies it and the fixes that round applies; the others are rejected with the reason.

    Fixes that touch no other are tried together first, and a failing group is halved until
    the failing fixes stand alone, so a file with hundreds of fixes costs a few analyses, not
    one per fix (:func:`_halving`). Members of a group that passes share the group's round."""
    rounds: dict[int, tuple[_Round, list[Finding]]] = {}

    def passes(group: list[Finding]) -> bool:
        outcome = _verified_round(text, findings, group, lint, unsafe)
        if not isinstance(outcome, str):
            rounds.update((id(f), (outcome, group)) for f in group)
        elif len(group) == 1:
            rejected[_identity(group[0])] = outcome
        return not isinstance(outcome, str)

    batch = _disjoint(candidates, text)
    _halving(batch, passes)
    for finding in candidates:
        if finding not in batch:
            passes([finding])
    return rounds


def _one_round(
    current: str,
    chosen: list[Finding],
    rounds: dict[int, tuple[_Round, list[Finding]]],
    lint: Lint,
) -> tuple[_Round, list[Finding]]:
    """Apply the verified fixes of ``chosen`` together, else the round verified for the first
    (its group's, which applies every member). The round and the findings it fixed."""
    if len(chosen) > 1:
        outcome = _try_round(current, chosen, lint)
        if not isinstance(outcome, str):
            return outcome, chosen
    return rounds[id(chosen[0])]


def fix_text(
    text: str,
    path: str,
    codes: Iterable[str] | None = None,
    unsafe: bool = False,
    *,
    project: ProjectView | None = None,
    assume_grad: bool = False,
) -> FileFix:
    """Fix ``text`` in memory; the result says what was applied, what remains, and which fixes
    failed verification (``dropped``).

    A fix may uncover a finding that an earlier write hid (only the first write to a saved
    tensor is reported); later rounds fix it too. The result is the last state in which every
    finding was already there at the start: a fix whose uncovered finding cannot be fixed is
    undone, so fixing never adds a finding. The remaining findings keep only verified fixes.
    ``project`` and ``assume_grad`` analyse the text as the run did (what the other files of
    the run say of it; the opt-in findings).
    """
    enabled = frozenset(codes) if codes is not None else None
    lint: Lint = functools.partial(
        _lint_text, path=path, codes=enabled, project=project, assume_grad=assume_grad
    )
    findings = lint(text)
    result = FileFix(path, before=text, after=text, remaining=findings)
    if any(f.code == PARSE_ERROR for f in findings):
        return result
    undone: dict[tuple[str, str, str], str] = {}  # fixes taken back: they uncovered more
    failed: dict[tuple[str, str, str], str] = {}  # verdicts on the text ``judged``
    current, original = text, {_key(f) for f in findings}
    judged = ""
    applied: list[Finding] = []
    checkpoint = (current, findings, 0, original)
    for _ in range(MAX_ROUNDS + 2 * len(findings)):
        candidates = [f for f in findings if applicable(f, unsafe) and _identity(f) not in undone]
        failed, judged = {}, current
        rounds = _passing(current, findings, candidates, lint, failed, unsafe)
        chosen = _disjoint([f for f in candidates if id(f) in rounds], current)
        outcome, done = _one_round(current, chosen, rounds, lint) if chosen else (None, [])
        if outcome is None:  # nothing left to try: settle, undoing fixes that uncovered more
            if len(applied) == checkpoint[2]:
                break
            undone.update((_identity(f), UNCOVERS) for f in applied[checkpoint[2] :])
            current, findings, count, original = checkpoint
            del applied[count:]
            continue
        fixed = {_key(f) for f in done}
        original = {outcome.move(k) for k in original if k not in fixed}
        current, findings = outcome.text, outcome.findings
        applied.extend(done)
        if all(_key(f) in original for f in findings):
            checkpoint = (current, findings, len(applied), original)
    current, findings, count, _ = checkpoint
    result.after, result.applied = current, applied[:count]
    known = {**(failed if judged == current else {}), **undone}
    result.remaining, result.dropped = _settle(current, findings, known, lint)
    return result


def _settle(
    text: str,
    findings: list[Finding],
    known: dict[tuple[str, str, str], str],
    lint: Lint,
) -> tuple[list[Finding], list[Dropped]]:
    """The remaining findings with verified fixes only: a fix already judged on this text (or
    undone) is dropped with its reason, any other (an unsafe fix held back, one never tried)
    is verified now."""
    dropped = [
        Dropped(f, known[_identity(f)])
        for f in findings
        if f.fix is not None and _identity(f) in known
    ]
    gone = {id(d.finding) for d in dropped}
    bare = [replace(f, fix=None) if id(f) in gone else f for f in findings]
    kept, more = verified(text, "", bare, lint=lint)
    return kept, sorted([*dropped, *more], key=lambda d: d.finding.sort_key())


# --------------------------------------------------------------------------- bytes and files


def _encode(text: str, encoding: str, bom: bool) -> bytes:
    return (codecs.BOM_UTF8 if bom else b"") + text.encode(encoding)


def fix_bytes(
    data: bytes,
    path: str,
    codes: Iterable[str] | None = None,
    unsafe: bool = False,
    *,
    project: ProjectView | None = None,
    assume_grad: bool = False,
) -> tuple[FileFix, bytes]:
    """Fix a file's bytes; returns the outcome and the new bytes (``data`` when unchanged)."""
    try:
        source = decode(data)
    except DecodeError as exc:
        return FileFix(path, error=f"{path}: not fixed: {exc}"), data
    if "\x00" in source.text:
        return FileFix(path, error=f"{path}: not fixed: source contains a null byte"), data
    try:
        round_trips = _encode(source.text, source.encoding, source.bom) == data
    except (UnicodeError, LookupError):
        round_trips = False
    result = fix_text(source.text, path, codes, unsafe, project=project, assume_grad=assume_grad)
    if not result.changed:
        return result, data
    if not round_trips:
        result.error = f"{path}: not fixed: its encoding does not round-trip byte for byte"
        result.after, result.applied = result.before, []
        return result, data
    try:
        new = _encode(result.after, source.encoding, source.bom)
    except UnicodeError:
        result.error = f"{path}: not fixed: the fix cannot be encoded as {source.encoding}"
        result.after, result.applied = result.before, []
        return result, data
    return result, new


def fix_file(
    path: Path,
    display: str,
    codes: Iterable[str] | None = None,
    *,
    unsafe: bool = False,
    write: bool = True,
    project: ProjectView | None = None,
    assume_grad: bool = False,
) -> FileFix:
    """Fix one file on disk; with ``write`` the new bytes replace it atomically.

    The file is not written when it cannot be read, decoded or parsed, when nothing applies, or
    when its bytes changed between reading and writing. A notebook's cells are fixed in place.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return FileFix(display, error=f"cannot read {display}: not a regular file")
        data = path.read_bytes()
    except OSError as exc:
        return FileFix(display, error=f"cannot read {display}: {exc.strerror or exc}")
    if path.suffix.lower() == ".ipynb":
        from inplace_lint.notebook import fix_notebook  # notebook.py builds on this module

        result, new = fix_notebook(data, display, codes, unsafe)
    else:
        result, new = fix_bytes(
            data, display, codes, unsafe, project=project, assume_grad=assume_grad
        )
    if not write or new == data or result.error is not None:
        return result
    problem = _write_atomic(path, new, data)
    if problem is not None:
        result.error = f"{display}: not fixed: {problem}"
        result.after, result.applied = result.before, []
        result.remaining = lint_bytes(data, display, codes, project, assume_grad)
    else:
        result.written = True
    return result


def _write_atomic(path: Path, data: bytes, expected: bytes) -> str | None:
    """Replace ``path`` (through symlinks) by ``data`` if it still holds ``expected``."""
    real = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode)
        written = replace_file(
            real,
            data,
            mode,
            suffix=".inplace-lint",
            unchanged=lambda: real.read_bytes() == expected,
        )
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    return None if written else "it changed on disk during the run"


def unified_diff(path: str, before: str, after: str) -> str:
    """A ``diff -u`` of one file's fix, with ``a/`` and ``b/`` prefixes like git."""
    old = _keepends(before)
    new = _keepends(after)
    lines = difflib.unified_diff(old, new, f"a/{path}", f"b/{path}")
    out = []
    for line in lines:
        out.append(
            line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
        )
    return "".join(out)


def _diff(path: str, before: str, after: str) -> str:
    """The diff of a fix; a notebook's is one per changed cell."""
    if path.lower().endswith(".ipynb"):
        from inplace_lint import notebook

        return notebook.unified_diff(path, before, after)
    return unified_diff(path, before, after)


def _keepends(text: str) -> list[str]:
    starts = _line_starts(text)
    pieces = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    return [piece for piece in pieces if piece]


@dataclass
class FixReport:
    """What ``--fix`` / ``--diff`` did over a whole run."""

    results: list[FileResult]
    errors: list[str] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    fixed: int = 0
    files: int = 0
    #: Fixes that failed verification, neither applied nor offered.
    dropped: list[Dropped] = field(default_factory=list)
    #: Verified unsafe fixes left out because ``--unsafe-fixes`` was not given.
    held_back: int = 0


def _run_views(
    results: Sequence[FileResult], known: Mapping[str, ProjectView] | None
) -> Callable[[int], ProjectView | None]:
    """Each result's project view: from ``known`` (by displayed path) when the run's lint
    built them, else ``project.build_views`` over the run's files on the first question (a
    run with nothing to fix or verify reads no file again)."""
    if known is not None:
        return lambda index: known.get(results[index].path)
    built: list[dict[int, ProjectView]] = []

    def view(index: int) -> ProjectView | None:
        if not built:
            built.append(build_views([(Path(r.path), r.path) for r in results]))
        return built[0].get(index)

    return view


def fix_results(
    results: Sequence[FileResult],
    config: Config,
    *,
    unsafe: bool,
    write: bool,
    views: Mapping[str, ProjectView] | None = None,
) -> FixReport:
    """Fix every file with findings; its result is replaced by the findings that remain
    (``views``: the run's project views by displayed path, when already built)."""
    report = FixReport(results=[])
    view = _run_views(results, views)
    for index, result in enumerate(results):
        if result.error is not None or not result.findings:
            report.results.append(result)
            continue
        if all(f.code == PARSE_ERROR for f in result.findings):
            report.results.append(result)
            continue
        path = Path(result.path)
        outcome = fix_file(
            path,
            result.path,
            config.codes_for(str(path)),
            unsafe=unsafe,
            write=write,
            project=view(index),
            assume_grad=config.assume_grad,
        )
        if outcome.error is not None:
            report.errors.append(outcome.error)
            report.results.append(result)
            continue
        if outcome.changed:
            report.fixed += len(outcome.applied)
            report.files += 1
            report.diffs.append(_diff(result.path, outcome.before, outcome.after))
        report.dropped.extend(outcome.dropped)
        if not unsafe:
            report.held_back += sum(
                1 for f in outcome.remaining if f.fix is not None and not f.fix.safe
            )
        remaining = outcome.remaining if write else result.findings
        report.results.append(FileResult(result.path, tuple(remaining)))
    return report


def verify_results(
    results: Sequence[FileResult],
    config: Config,
    sources: Mapping[str, bytes] | None = None,
    views: Mapping[str, ProjectView] | None = None,
) -> list[FileResult]:
    """``results`` with only the fixes that pass verification, for a report that offers them.

    Each file with a fix is read again (``sources`` holds what cannot be: standard input); a
    file that cannot be read or decoded now keeps its findings without fixes. ``views``: the
    run's project views by displayed path, when its lint built them.
    """
    checked = []
    view = _run_views(results, views)
    for index, result in enumerate(results):
        if not any(f.fix is not None for f in result.findings):
            checked.append(result)
            continue
        codes = config.codes_for(result.path)
        data = (sources or {}).get(result.path)
        try:
            if data is None:
                data = Path(result.path).read_bytes()
            if result.path.lower().endswith(".ipynb"):
                from inplace_lint.notebook import verified_notebook

                findings = verified_notebook(data, result.path, codes)
            else:
                text = decode(data).text
                lint = functools.partial(
                    _lint_text,
                    path=result.path,
                    codes=frozenset(codes),
                    project=view(index),
                    assume_grad=config.assume_grad,
                )
                findings, _ = verified(text, result.path, result.findings, lint=lint, together=True)
        except (OSError, DecodeError, ValueError):  # ValueError: not a notebook now
            findings = [replace(f, fix=None) for f in result.findings]
        checked.append(replace(result, findings=tuple(findings)))
    return checked

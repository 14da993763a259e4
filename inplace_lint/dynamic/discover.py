"""Pass C: in-place statements that no static finding sits on, found by flipping them.

Pass B only tries the sites the static pass names, so a hazard the static pass misses is
never put to the test. Pass C takes the other in-place statements of the subject's own source
that ran (every line the out-of-place twin rewrites) and flips them all together. If that twin
computes what the original computes (within tolerance and the run-to-run noise), none of them
matters and one run decided them all; otherwise the set is halved and each half tried again,
down to single lines (adaptive group testing: about k·log2(n) runs for k hazards among n
statements). Only a line's own twin confirms it. Where the unchanged run raised an in-place
error, the test is whether the twin runs; lines that each keep it failing while the others are
flipped are found by flipping all but one.

A line found so is confirmed only where one more run (``writefacts``) shows the write is an
autograd hazard and not an intended update: its values reached an autograd graph, or the op
read what it overwrote; and it did not write model state (parameters, buffers, leaves that
require grad: optimizer steps, EMA teachers, running statistics). A twin also differs for a
buffer a helper fills for its caller on purpose, or a hand-written optimizer's moments; those
never reach a graph. So a stale value that only plain data computations read (a caller's
images normalised in place before an inference-only predict) is left to the static pass.
``inplace=True`` module constructions are kept without that run: they write activations. On
CUDA an in-place dropout draws its mask by another kernel than the out-of-place one, so its
twin differs for that alone: those lines are not tried there.

Limits: only the subject's own file, and only a subject that runs from its source (a script,
a ``path.py::name`` target); at most ``RUNS`` twin runs per subject. The code comes from the
statement's text (``written``), since no static fact names it: IPL007 through ``.data``,
IPL004 for a parameter of the enclosing function, IPL003/IPL001 for a write that made the run
raise (as torch's message says), else IPL002.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable

import torch

from inplace_lint.checks import code_for_evidence
from inplace_lint.dynamic.reference import Reference, judge_twin
from inplace_lint.dynamic.report import Confirmed
from inplace_lint.dynamic.runner import Outcome, Subject, _describe, flippable, run
from inplace_lint.dynamic.sites import Site
from inplace_lint.dynamic.twin import out_of_place_twin
from inplace_lint.dynamic.writefacts import WriteFacts, recording
from inplace_lint.dynamic.written import statement_spans, written_at

__all__ = ["INPLACE_ERROR", "RUNS", "code_for_error", "discover", "inplace_error"]

#: The most twin runs pass C makes for one subject.
RUNS = 40

#: Autograd errors that an in-place operation causes.
INPLACE_ERROR = re.compile(
    r"modified by an inplace operation|used in an in-place operation|is being modified inplace"
    r"|functions with out=\.\.\. arguments don't support automatic differentiation"
    r"|a view of a leaf Variable|inplace|in-place",
    re.IGNORECASE,
)

_FOUND = "no static finding here; found by flipping the in-place statements that ran"


def code_for_error(message: str) -> str:
    """The code for a write that makes the run raise ``message``."""
    if "leaf Variable" in message:
        return code_for_evidence("leaf-error")
    return code_for_evidence("autograd-error")


def candidate_lines(
    source: str, spans: dict[int, tuple[int, int]], executed: set[int], judged: set[int]
) -> list[int]:
    """Lines of in-place statements in ``source`` that ran and that no static finding covers:
    each line the whole-file twin rewrites, one per statement (``spans``:
    ``written.statement_spans``)."""
    before, after = source.splitlines(), out_of_place_twin(source).splitlines()
    if len(before) != len(after):
        return []
    found: list[int] = []
    seen: set[tuple[int, int]] = set()
    for number, (old, new) in enumerate(zip(before, after, strict=True), 1):
        span = spans.get(number)
        if old == new or span is None or span in seen:
            continue
        lines = set(range(span[0], span[1] + 1))
        if lines & judged or not lines & executed:
            continue
        if flippable(source, number):
            seen.add(span)
            found.append(number)
    return found


class _Search:
    """One subject's pass C: the runs made so far and what they confirmed."""

    def __init__(
        self,
        subject: Subject,
        base: Outcome,
        tree: ast.Module,
        reference: Reference | None,
        fixed: frozenset[int] = frozenset(),
    ) -> None:
        assert subject.path is not None
        self.subject, self.base, self.reference = subject, base, reference
        self.fixed = fixed  # lines flipped in every run: the hazards already confirmed
        self.path: str = subject.path
        self.tree = tree
        self.runs = 0
        self.found: list[Confirmed] = []

    def twin(self, lines: list[int]) -> Outcome | None:
        if self.runs >= RUNS:
            return None
        self.runs += 1
        return run(self.subject, flip=(self.path, lines[0]), also=frozenset(lines) | self.fixed)

    def differs(self, lines: list[int]) -> tuple[bool | None, str]:
        """Whether flipping ``lines`` changes the result: True, False, or None (the twin
        raised, or the budget is spent)."""
        twin = self.twin(lines)
        if twin is None or not twin.ok or not twin.values:
            return None, ""
        found = judge_twin(self.reference, twin, lambda: self.twin(lines) or Outcome(flipped=False))
        if found is None or found.other_draws:
            return None, ""
        return found.differs, found.evidence()

    def silent(self, lines: list[int]) -> None:
        if self.runs >= RUNS:
            return
        differs, evidence = self.differs(lines)
        if differs is False:
            return
        if len(lines) == 1:
            if differs:
                self.confirm(lines[0], "silent", f"the out-of-place twin differs: {evidence}")
            return
        half = len(lines) // 2
        self.silent(lines[:half])
        self.silent(lines[half:])

    def raising(self, lines: list[int]) -> None:
        """Lines whose flip makes the failing run pass."""
        twin = self.twin(lines)
        if twin is None or not twin.ok:
            return
        if len(lines) == 1:
            self.confirm(lines[0], "raises", self.fixed_by_twin())
            return
        count = len(self.found)
        half = len(lines) // 2
        self.raising(lines[:half])
        self.raising(lines[half:])
        if len(self.found) == count:  # each half alone keeps it failing: several writes
            for line in lines:
                back = self.twin([n for n in lines if n != line])
                if back is not None and back.error is not None and inplace_error(back.error):
                    self.confirm(line, "raises", self.fixed_by_twin(together=True))

    def fixed_by_twin(self, together: bool = False) -> str:
        error = self.base.error
        assert error is not None
        tail = " with the other found lines out of place too" if together else ""
        return f"the run raises {_describe(error)}; its out-of-place twin at this line runs{tail}"

    def confirm(self, line: int, kind: str, evidence: str) -> None:
        site = Site(self.path, line, 1)
        self.found.append(Confirmed(site, "", f"{evidence} ({_FOUND})", kind, "pass C"))

    def named(self, facts: WriteFacts | None) -> list[Confirmed]:
        """The confirmations, each with its code: from torch's message for a run that
        raised; else from what the statement writes (``written``) and what the recorder saw
        it read."""
        named = []
        for found in self.found:
            line = found.site.line
            written = written_at(self.tree, line)
            if found.kind == "raises":
                code = code_for_error(str(self.base.error))
            elif written.in_function or (facts is not None and line in facts.backward):
                code = code_for_evidence("function-write")
            elif written.through_data:
                code = code_for_evidence("bypass-twin")
            elif _argument(written.argument, facts, line):
                code = code_for_evidence("argument-twin")
            else:
                code = code_for_evidence("stale-twin")
            named.append(dataclasses.replace(found, code=code))
        return named


def _argument(text_says: bool, facts: WriteFacts | None, line: int) -> bool:
    """Whether the write at ``line`` changed a tensor its function was called with and read
    nothing it overwrote: as the recorded run saw it, else as the statement's text says."""
    if facts is None:
        return text_says
    return line in facts.argument and line not in facts.overlap


#: dispatch keys that torch's "could not run ... with arguments from the ... backend" lists
_DISPATCH_KEYS = re.compile(r"\w*InplaceOrView\w*")


def inplace_error(error: BaseException) -> bool:
    """Whether ``error`` is an autograd error that an in-place operation causes. Not a
    ``NotImplementedError`` (an op with no kernel for the device, whose message lists the
    dispatch keys, ``ADInplaceOrView`` among them: a program that cannot run there)."""
    if not isinstance(error, RuntimeError) or isinstance(error, NotImplementedError):
        return False
    return bool(INPLACE_ERROR.search(_DISPATCH_KEYS.sub("", str(error))))


def discover(
    subject: Subject,
    base: Outcome,
    reference: Callable[[], Reference | None],
    judged: set[int],
    fixed: set[int] = frozenset(),  # type: ignore[assignment]
) -> list[Confirmed]:
    """Hazards at in-place statements of the subject's own source that no static finding
    covers (``judged``: lines already put to the test); see the module's docstring.

    ``fixed``: lines of hazards confirmed already. Where there are some (and the run did not
    raise), every twin has them out of place too and is compared with that program, so only a
    further hazard shows (an ``inplace=True`` module confirmed where it is called is not
    found again where it is built)."""
    path = subject.path
    if path is None or not hasattr(subject, "source"):
        return []
    source: str = subject.source  # type: ignore[attr-defined]
    executed = {line for where, line in base.lines if where == path}
    try:
        tree = ast.parse(source)
        spans = statement_spans(tree)
        lines = candidate_lines(source, spans, executed, judged)
    except (SyntaxError, ValueError):
        return []
    if torch.get_default_device().type == "cuda":  # another kernel, another random mask
        lines = [n for n in lines if not written_at(tree, n).random_flag]
    if not lines:
        return []
    if base.error is not None:
        if not inplace_error(base.error):
            return []
        search = _Search(subject, base, tree, None)
        search.raising(lines)
        return search.named(None)
    flips = frozenset(n for n in fixed if flippable(source, n))
    known = _fixed_reference(subject, path, flips) if flips else reference()
    if known is None or not base.values:
        return []
    search = _Search(subject, base, tree, known, flips)
    search.silent(lines)
    if not search.found:
        return []
    # an ``inplace=True`` module writes when it runs, not where it is built (whose line
    # writes the new module's parameters); it writes activations, in a graph
    flags = {c.site.line for c in search.found if written_at(tree, c.site.line).module_flag}
    asked = [c.site.line for c in search.found if c.site.line not in flags]
    facts = _watch(subject, path, spans, asked)
    kept = flags | ((facts.graph | facts.overlap) - facts.state)
    return [c for c in search.named(facts) if c.site.line in kept]


def _fixed_reference(subject: Subject, path: str, lines: frozenset[int]) -> Reference | None:
    """The reference of the program with ``lines`` out of place (two runs: its noise floor);
    None when it raises or leaves nothing to compare."""
    runs = [run(subject, flip=(path, min(lines)), also=lines) for _ in range(2)]
    if any(not r.ok or not r.values for r in runs):
        return None
    return Reference([r.values for r in runs], runs[0].rng)


def _watch(
    subject: Subject, path: str, spans: dict[int, tuple[int, int]], lines: list[int]
) -> WriteFacts:
    """What the writes at ``lines`` did (``writefacts``), by one more run."""
    asked: dict[int, int] = {}
    for line in lines:
        first, last = spans.get(line, (line, line))
        for number in range(first, last + 1):
            asked[number] = line
    recorder = WriteFacts(path, asked)
    if asked:
        run(subject, watch=recording(recorder))
    return recorder

"""Run a subject once with pass A, lint the files it touched, then flip each reached static
finding to its out-of-place twin (pass B: in the ``torch.fx`` graph where the model traces
faithfully, else in the source) and compare."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable

import torch

from inplace_lint.dynamic.chain import past_raising_sites
from inplace_lint.dynamic.device import on_device
from inplace_lint.dynamic.discover import code_for_error, discover, inplace_error
from inplace_lint.dynamic.fxroute import FxRoute, prepare
from inplace_lint.dynamic.limits import deadline
from inplace_lint.dynamic.passa import VERSION_ERROR
from inplace_lint.dynamic.reference import Difference, Reference, judge_twin, measure
from inplace_lint.dynamic.report import (
    CONFIRMED,
    INCONCLUSIVE,
    NOT_CONFIRMED,
    NOT_REACHED,
    Confirmed,
    Report,
    Status,
    confirm_hit,
)
from inplace_lint.dynamic.runner import (
    BadInput,
    Outcome,
    Subject,
    _describe,
    as_the_user_runs,
    run,
)
from inplace_lint.dynamic.sites import Site, traceback_sites
from inplace_lint.dynamic.static import enabled_codes, lint_reached, reached_files
from inplace_lint.finding import Finding

__all__ = ["check"]

#: Told what the check does now (``progress.Progress.phase``); the CLI draws it.
Phase = Callable[[str], None]


def _quiet(text: str) -> None:
    pass


class _Index:
    """Static findings by absolute path, matched to runtime sites by statement lines."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        self.absolute = {id(f): os.path.abspath(f.path) for f in findings}

    def lines(self, finding: Finding) -> range:
        first, last = finding.statement_lines or (finding.line, finding.line)
        return range(min(first, finding.line), max(last, finding.line) + 1)

    def at(self, site: Site) -> list[Finding]:
        return [
            f
            for f in self.findings
            if self.absolute[id(f)] == site.path and site.line in self.lines(f)
        ]

    def reached(self, finding: Finding, lines: set[tuple[str, int]]) -> bool:
        path = self.absolute[id(finding)]
        return any((path, line) in lines for line in self.lines(finding))

    def site(self, finding: Finding) -> Site:
        return Site(self.absolute[id(finding)], finding.line, finding.column)


def check(
    subject: Subject,
    graph: bool = False,
    codes: Iterable[str] | None = None,
    *,
    device: torch.device | None = None,
    timeout: float | None = None,
    phase: Phase = _quiet,
    cache: bool = True,
) -> Report:
    """Confirm or refute in-place hazards for one subject; raises ``BadInput``.

    ``device``: every run (pass A, twins, the ``torch.fx`` route) on it, as torch's default
    device (``device.on_device``). ``timeout``: wall-clock seconds for the whole subject;
    past it ``limits.TargetTimeout`` is raised. ``cache``: use the static per-file cache.
    """
    with deadline(timeout), on_device(device):
        return _check(subject, graph, codes, phase, cache)


def _check(
    subject: Subject, graph: bool, codes: Iterable[str] | None, phase: Phase, cache: bool
) -> Report:
    started = time.perf_counter()
    report = Report(subject.label)
    phase("running it with pass A")
    base = _base_run(subject, report)
    files = reached_files(base.lines, subject.path)
    report.files = files
    phase(f"linting {len(files)} file(s) it ran")
    index = _Index(lint_reached(files, codes, cache))
    confirmed: dict[int, Confirmed] = {}  # by id(finding); -1 - n for unmatched ones
    extra: list[Confirmed] = []

    def confirm(site: Site, code: str, evidence: str, kind: str, how: str) -> bool:
        matches = index.at(site)
        for finding in matches:
            if id(finding) not in confirmed:
                confirmed[id(finding)] = Confirmed(
                    index.site(finding), finding.code, evidence, kind, how
                )
        return bool(matches)

    for hit in base.hits:
        confirm_hit(hit, confirm, extra)

    explained = any(h.kind == "raises" for h in base.hits)
    error = base.error
    shared = _Shared(subject, base, report, phase)
    candidates = [
        f for f in index.findings if id(f) not in confirmed and index.reached(f, base.lines)
    ]
    if error is not None and not explained:
        message = _describe(error)
        where = traceback_sites(error.__traceback__)
        inplace = inplace_error(error)
        evidence = f"the run raises {message}"
        if inplace and where and confirm(where[0], "", evidence, "raises", "autograd error"):
            explained = True
        with as_the_user_runs():  # which twins no longer raise, as the user runs them
            fixed = _twins(subject, index, candidates, base, confirmed, report, shared)
            explained = explained or fixed
            if not explained:
                found = _discover(subject, index, base, shared, (confirmed, extra), codes)
                explained = bool(found)
        if not explained and inplace and where:
            code = code_for_error(str(error))
            extra.append(Confirmed(where[0], code, evidence, "raises", "autograd error"))
            explained = True
        if not explained:
            at = f" at {where[0].short()}" if where else ""
            raise BadInput(f"{subject.label}: the run raised {message}{at}; no in-place cause")
    elif error is not None:  # explained by pass A: the other sites' twins, judged as run
        with as_the_user_runs():
            _twins(subject, index, candidates, base, confirmed, report, shared)
    else:
        _twins(subject, index, candidates, base, confirmed, report, shared)
        _discover(subject, index, base, shared, (confirmed, extra), codes)
    if error is not None:
        phase("running again past the raising sites found")
        with as_the_user_runs():
            past_raising_sites(subject, confirm, list(confirmed.values()), extra)

    report.confirmed = list(confirmed.values()) + extra
    _statuses(report, index, confirmed, base)
    if graph:
        from inplace_lint.dynamic.graph import draw

        phase("drawing the graphs")
        report.graphs = draw(subject, report.confirmed)
    report.seconds = time.perf_counter() - started
    return report


def _base_run(subject: Subject, report: Report) -> Outcome:
    """The run with pass A, as the user runs it; where torch.func (grad, vjp, jacrev)
    refuses pass A's saved-tensor hooks, the run without it (the twins still judge every
    site, as for any run), with a note."""
    with as_the_user_runs():
        base = run(subject, detect=True, cover=True)
        if not _hooks_refused(base.error):
            return base
        report.notes.append(
            "pass A was not run: torch.func refuses saved-tensor hooks; the sites were judged "
            "by their out-of-place twins only"
        )
        return run(subject, cover=True)


def _hooks_refused(error: BaseException | None) -> bool:
    """The run stopped because torch.func does not support pass A's saved-tensor hooks."""
    return isinstance(error, RuntimeError) and "don't yet support saved tensor hooks" in str(error)


def _statuses(
    report: Report, index: _Index, confirmed: dict[int, Confirmed], base: Outcome
) -> None:
    """Each finding's status: confirmed, inconclusive, not confirmed (ran) or not reached."""
    details = getattr(report, "_details", {})
    unsure = getattr(report, "_inconclusive", set())
    for finding in index.findings:
        if id(finding) in confirmed:
            status = Status(finding, CONFIRMED, confirmed[id(finding)].how)
        elif index.reached(finding, base.lines) and id(finding) in unsure:
            status = Status(finding, INCONCLUSIVE, details.get(id(finding), ""))
        elif index.reached(finding, base.lines):
            status = Status(finding, NOT_CONFIRMED, details.get(id(finding), "ran"))
        else:
            status = Status(finding, NOT_REACHED)
        report.statuses.append(status)


def _again(
    subject: Subject, key: tuple[str, int], route: FxRoute | None, flips: object
) -> Callable[[], Outcome]:
    """The twin's second run, by the route that ran it first."""
    if route is not None:
        return lambda: route.run(flips)  # type: ignore[arg-type]
    return lambda: run(subject, flip=key)


def _nothing_to_compare(subject: Subject) -> str:
    """Why a twin that ran could not be compared; for a script, what to do about it."""
    if hasattr(subject, "source") and not hasattr(subject, "name"):
        return (
            "ran; nothing to compare: the script leaves no tensors at module level, so a "
            "silent hazard cannot show; confirm a path.py::name target whose function "
            "returns the tensors (or (model, inputs))"
        )
    return "ran; nothing to compare: the run returned no tensors"


def _twins(
    subject: Subject,
    index: _Index,
    candidates: list[Finding],
    base: Outcome,
    confirmed: dict[int, Confirmed],
    report: Report,
    shared: _Shared,
) -> bool:
    """Pass B: flip each candidate alone; return whether a flip removed the base's error.

    A site goes through the traced model's graph (``fxroute``) where the model traces, the
    graph reproduces the eager run and nodes at the site can be flipped; otherwise its
    source twin runs eagerly.
    """
    details: dict[int, str] = {}
    report._details = details  # type: ignore[attr-defined]
    unsure: set[int] = set()  # ids of findings the runs could not decide (inconclusive)
    report._inconclusive = unsure  # type: ignore[attr-defined]
    fixed = False
    done: dict[tuple[str, int], tuple[Outcome, Difference | None, str]] = {}
    phase = shared.phase
    for number, finding in enumerate(candidates, 1):
        if id(finding) in confirmed:
            continue
        site = index.site(finding)
        key = (site.path, site.line)
        if key not in done:
            phase(f"twin {number}/{len(candidates)} at {site.short()}")
            done[key] = _one_twin(subject, base, key, shared.route(), shared.reference)
        twin, found, tail = done[key]
        how = "torch.fx twin" if tail else "twin"
        if not (twin.flipped and twin.ok and found and found.differs):
            unsure.add(id(finding))
        if not twin.flipped:
            details[id(finding)] = "ran; could not flip this line to its out-of-place twin"
        elif base.error is not None:
            if twin.ok:
                fixed = True
                evidence = (
                    f"the run raises {_describe(base.error)}; "
                    f"its out-of-place twin at this line runs{tail}"
                )
                confirmed[id(finding)] = Confirmed(site, finding.code, evidence, "raises", how)
            else:
                details[id(finding)] = f"the run raises, and its out-of-place twin raises too{tail}"
        elif twin.error is not None:
            details[id(finding)] = f"its out-of-place twin raises {_describe(twin.error)}{tail}"
        elif found is not None and found.differs:
            evidence = f"the out-of-place twin differs: {found.evidence()}{tail}"
            confirmed[id(finding)] = Confirmed(site, finding.code, evidence, "silent", how)
        elif not base.values or not twin.values:
            details[id(finding)] = _nothing_to_compare(subject)
        elif found is None:
            details[id(finding)] = "the unchanged run raised when repeated, so nothing to compare"
        elif found.other_draws:
            details[id(finding)] = (
                "ran; the twin draws other random numbers than the original (an in-place "
                "flag changes the kernel that draws them), so nothing to compare"
            )
        else:
            unsure.discard(id(finding))
            details[id(finding)] = (
                f"ran; the twin matches, within tolerance and the run-to-run noise "
                f"(largest difference {found.worst:.3g}){tail}"
            )
    if base.error is not None:  # findings the error kept from running count here too
        _behind(subject, index, index.findings, confirmed, details)
        if not fixed:
            fixed = _together(subject, index, candidates, confirmed, base.error)
    return fixed


class _Shared:
    """What the twins of one subject share, made on first use: the ``torch.fx`` route and
    the reference (the unchanged run, twice: the noise floor)."""

    def __init__(self, subject: Subject, base: Outcome, report: Report, phase: Phase) -> None:
        self.subject, self.base, self.report, self.phase = subject, base, report, phase
        self.routes: list[FxRoute | None] = []
        self.references: list[Reference | None] = []

    def route(self) -> FxRoute | None:
        if not self.routes:
            route, reason = prepare(self.subject, self.base)
            self.routes.append(route)
            if reason:
                self.report.notes.append(f"pass B did not use torch.fx: {reason}")
        return self.routes[0]

    def reference(self) -> Reference | None:
        if not self.references:
            self.phase("measuring the run-to-run noise")
            self.references.append(measure(self.subject))
        return self.references[0]


def _one_twin(
    subject: Subject,
    base: Outcome,
    key: tuple[str, int],
    route: FxRoute | None,
    reference: Callable[[], Reference | None],
) -> tuple[Outcome, Difference | None, str]:
    """Run the twin of one site (through ``route`` where it can flip the site) and judge it
    against the reference: the twin's outcome, its difference, and the evidence's tail."""
    flips = route.flips(*key) if route is not None else None
    twin, tail = None, ""
    if route is not None and flips:
        twin, tail = route.run(flips), " (torch.fx twin)"
    if twin is None or not twin.flipped:
        twin, tail = run(subject, flip=key), ""
    found = None
    if twin.flipped and twin.ok and base.ok and twin.values:
        again = _again(subject, key, route if tail else None, flips)
        found = judge_twin(reference(), twin, again)
    return twin, found, tail


def _discover(
    subject: Subject,
    index: _Index,
    base: Outcome,
    shared: _Shared,
    known: tuple[dict[int, Confirmed], list[Confirmed]],
    codes: Iterable[str] | None,
) -> list[Confirmed]:
    """Pass C (``discover``) over the lines no static finding or confirmation covers; what
    it finds under a code the subject's configuration (or ``codes``) leaves out is dropped."""
    path = subject.path
    if path is None:
        return []
    confirmed, extra = known
    done = {c.site.line for c in (*confirmed.values(), *extra) if c.site.path == path}
    judged = set(done)
    for finding in index.findings:
        if index.absolute[id(finding)] == path:
            judged.update(index.lines(finding))
    shared.phase("flipping the in-place statements no finding covers")
    enabled = enabled_codes(path, codes)
    found = discover(subject, base, shared.reference, judged, done)
    found = [c for c in found if c.code in enabled]
    extra.extend(found)
    return found


def _together(
    subject: Subject,
    index: _Index,
    candidates: list[Finding],
    confirmed: dict[int, Confirmed],
    error: BaseException,
) -> bool:
    """Sites that each raise whichever is flipped alone (``px_grad *= g`` and ``py_grad *= g``
    in one backward): flip every unconfirmed site of the script together; if that runs, each
    site whose flip back makes it raise an in-place error again is confirmed."""
    path = subject.path
    if path is None or not hasattr(subject, "source"):
        return False
    sites = [index.site(f) for f in candidates if id(f) not in confirmed]
    pool = sorted({site.line for site in sites if site.path == path})
    if not 2 <= len(pool) <= 12:
        return False
    lines = frozenset(pool)
    if not run(subject, flip=(path, pool[0]), also=lines).ok:
        return False
    found = False
    for line in pool:
        rest = lines - {line}
        back = run(subject, flip=(path, min(rest)), also=rest)
        if back.ok or back.error is None or not inplace_error(back.error):
            continue
        others = ", ".join(str(n) for n in sorted(rest))
        evidence = (
            f"the run raises {_describe(error)}; with line(s) {others} out of place too it "
            f"runs, and with this line in place it raises again"
        )
        for finding in candidates:
            site = index.site(finding)
            if (site.path, site.line) == (path, line) and id(finding) not in confirmed:
                confirmed[id(finding)] = Confirmed(site, finding.code, evidence, "raises", "twin")
                found = True
    return found


def _behind(
    subject: Subject,
    index: _Index,
    candidates: list[Finding],
    confirmed: dict[int, Confirmed],
    details: dict[int, str],
) -> None:
    """Sites that raise only once the confirmed ones are out of place: ``w -= lr * g`` then
    ``b -= lr * g`` raise one after the other, so flipping the second alone changes nothing.

    Runs the script with every confirmed raising site flipped; while it still raises an
    in-place error, a candidate whose flip (on top of those) makes it run is confirmed too.
    """
    path = subject.path
    if path is None or not hasattr(subject, "source"):
        return
    while True:
        lines = frozenset(
            c.site.line for c in confirmed.values() if c.kind == "raises" and c.site.path == path
        )
        if not lines:
            return
        fixed_so_far = run(subject, flip=(path, min(lines)), also=lines)
        error = fixed_so_far.error
        if error is None or not inplace_error(error):
            return
        added = False
        for finding in candidates:
            site = index.site(finding)
            if id(finding) in confirmed or site.path != path or site.line in lines:
                continue
            twin = run(subject, flip=(path, site.line), also=lines)
            if twin.flipped and twin.ok:
                shown = ", ".join(str(n) for n in sorted(lines))
                evidence = (
                    f"with line(s) {shown} out of place the run still raises "
                    f"{_describe(error)}; its out-of-place twin at this line runs"
                )
                confirmed[id(finding)] = Confirmed(site, finding.code, evidence, "raises", "twin")
                details.pop(id(finding), None)
                added = True
                break
        if not added:
            return


_ = VERSION_ERROR

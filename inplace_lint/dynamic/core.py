"""Run a subject once with pass A, lint the files it touched, then flip each reached static
finding to its out-of-place twin (pass B: in the ``torch.fx`` graph where the model traces
faithfully, else in the source) and compare."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from pathlib import Path

from inplace_lint.checks import PARSE_ERROR, code_for_evidence
from inplace_lint.config import Config, ConfigError, find_pyproject, load_config
from inplace_lint.dynamic.fxroute import FxRoute, prepare
from inplace_lint.dynamic.passa import VERSION_ERROR, Hit
from inplace_lint.dynamic.report import (
    CONFIRMED,
    NOT_CONFIRMED,
    NOT_REACHED,
    Confirmed,
    Report,
    Status,
)
from inplace_lint.dynamic.runner import BadInput, Outcome, Subject, _describe, compare, run
from inplace_lint.dynamic.sites import Site, traceback_sites
from inplace_lint.engine import lint_path
from inplace_lint.finding import Finding

__all__ = ["check"]

#: Autograd errors that an in-place operation causes.
INPLACE_ERROR = re.compile(
    r"modified by an inplace operation|used in an in-place operation|is being modified inplace"
    r"|functions with out=\.\.\. arguments don't support automatic differentiation"
    r"|a view of a leaf Variable|inplace|in-place",
    re.IGNORECASE,
)


def _code_for_error(message: str) -> str:
    if "leaf Variable" in message:
        return code_for_evidence("leaf-error")
    return code_for_evidence("autograd-error")


def _display(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith(".." + os.sep) else relative


def _lint(files: list[str], codes: Iterable[str] | None) -> list[Finding]:
    found: list[Finding] = []
    for file in files:
        if codes is not None:
            config = Config(select=tuple(codes))
        else:
            try:
                config = load_config(find_pyproject(Path(file)))
            except ConfigError:
                config = Config()
        result = lint_path(Path(file), _display(file), config)
        found.extend(f for f in result.findings if f.code != PARSE_ERROR)
    return found


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


def check(subject: Subject, graph: bool = False, codes: Iterable[str] | None = None) -> Report:
    """Confirm or refute in-place hazards for one subject; raises ``BadInput``."""
    started = time.perf_counter()
    report = Report(subject.label)
    base = run(subject, detect=True, cover=True)
    files = sorted(f for f in base.files if f.endswith(".py") and os.path.isfile(f))
    if subject.path is not None and subject.path not in files and os.path.isfile(subject.path):
        files.insert(0, subject.path)
    report.files = files
    index = _Index(_lint(files, codes))
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
        _confirm_hit(hit, confirm, extra)

    explained = any(h.kind == "raises" for h in base.hits)
    error = base.error
    candidates = [
        f for f in index.findings if id(f) not in confirmed and index.reached(f, base.lines)
    ]
    if error is not None and not explained:
        message = _describe(error)
        where = traceback_sites(error.__traceback__)
        inplace = isinstance(error, RuntimeError) and bool(INPLACE_ERROR.search(str(error)))
        evidence = f"the run raises {message}"
        if inplace and where and confirm(where[0], "", evidence, "raises", "autograd error"):
            explained = True
        fixed = _twins(subject, index, candidates, base, confirmed, report)
        explained = explained or fixed
        if not explained and inplace and where:
            code = _code_for_error(str(error))
            extra.append(Confirmed(where[0], code, evidence, "raises", "autograd error"))
            explained = True
        if not explained:
            at = f" at {where[0].short()}" if where else ""
            raise BadInput(f"{subject.label}: the run raised {message}{at}; no in-place cause")
    else:
        _twins(subject, index, candidates, base, confirmed, report)

    report.confirmed = list(confirmed.values()) + extra
    details = getattr(report, "_details", {})
    for finding in index.findings:
        if id(finding) in confirmed:
            status = Status(finding, CONFIRMED, confirmed[id(finding)].how)
        elif index.reached(finding, base.lines):
            status = Status(finding, NOT_CONFIRMED, details.get(id(finding), "ran"))
        else:
            status = Status(finding, NOT_REACHED)
        report.statuses.append(status)
    if graph:
        from inplace_lint.dynamic.graph import draw

        report.graphs = draw(subject, report.confirmed)
    report.seconds = time.perf_counter() - started
    return report


def _confirm_hit(hit: Hit, confirm: object, extra: list[Confirmed]) -> None:
    assert callable(confirm)
    code = code_for_evidence("raises" if hit.kind == "raises" else "silent")
    matched = False
    for site in hit.sites:
        matched = confirm(site, code, hit.evidence(), hit.kind, "pass A") or matched
    if not matched and hit.sites:
        extra.append(Confirmed(hit.sites[0], code, hit.evidence(), hit.kind, "pass A"))


def _twins(
    subject: Subject,
    index: _Index,
    candidates: list[Finding],
    base: Outcome,
    confirmed: dict[int, Confirmed],
    report: Report,
) -> bool:
    """Pass B: flip each candidate alone; return whether a flip removed the base's error.

    A site goes through the traced model's graph (``fxroute``) where the model traces, the
    graph reproduces the eager run and nodes at the site can be flipped; otherwise its
    source twin runs eagerly.
    """
    details: dict[int, str] = {}
    report._details = details  # type: ignore[attr-defined]
    fixed = False
    done: dict[tuple[str, int], tuple[Outcome, float, str | None, bool, str]] = {}
    routes: list[FxRoute | None] = []

    def fx_route() -> FxRoute | None:
        if not routes:
            route, reason = prepare(subject, base)
            routes.append(route)
            if reason:
                report.notes.append(f"pass B did not use torch.fx: {reason}")
        return routes[0]

    for finding in candidates:
        if id(finding) in confirmed:
            continue
        site = index.site(finding)
        key = (site.path, site.line)
        if key not in done:
            route = fx_route()
            flips = route.flips(*key) if route is not None else None
            twin, tail = None, ""
            if route is not None and flips:
                twin, tail = route.run(flips), " (torch.fx twin)"
            if twin is None or not twin.flipped:
                twin, tail = run(subject, flip=key), ""
            worst, where, differs = (0.0, None, False)
            if twin.flipped and twin.ok and base.ok:
                worst, where, differs = compare(base.values, twin.values)
            done[key] = (twin, worst, where, differs, tail)
        twin, worst, where, differs, tail = done[key]
        how = "torch.fx twin" if tail else "twin"
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
                details[id(finding)] = f"ran; the twin raises too{tail}"
        elif twin.error is not None:
            details[id(finding)] = f"ran; the twin raises {_describe(twin.error)}{tail}"
        elif differs:
            evidence = (
                f"the out-of-place twin differs: largest difference {worst:.4g} in '{where}'{tail}"
            )
            confirmed[id(finding)] = Confirmed(site, finding.code, evidence, "silent", how)
        elif not base.values:
            details[id(finding)] = "ran; nothing to compare"
        else:
            details[id(finding)] = f"ran; the twin matches (largest difference {worst:.3g}){tail}"
    if base.error is not None:  # findings the error kept from running count here too
        _behind(subject, index, index.findings, confirmed, details)
    return fixed


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
        if error is None or not INPLACE_ERROR.search(str(error)):
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

"""Score the dynamic checker (``inplace-lint confirm``) on labelled case files.

Each case (``# label: hazard raises|hazard silent|safe [no-twin]`` on its first line,
``# <-- IPL00N`` markers on hazard lines) is a script, so it is confirmed as a script target,
exactly as ``tests/test_dynamic.py`` does: it runs as ``__main__`` and pass B compares the
tensors (and leaf gradients, module gradients) it leaves at module level, which is how the
cases were validated (``tools/heldout.py validate``). Every rule code is enabled, whatever a
``pyproject.toml`` near the cases selects.

    python tools/confirm_score.py tests/cases bench/rounds/round6 [--jobs 2] [--timeout 120]

Prints, per folder and overall: hazard files whose every marked line is confirmed with its
code, safe files with a confirmation (false confirmations), marker recall, and precision
(confirmations on a marked line with its code / all confirmations); then the misses (with
the checker's status for each marked line, the cause) and the false confirmations. Cases
run in worker processes (``--jobs``), each under a per-case time limit (``--timeout``); a
case that runs past it counts as a miss (hazard) or is listed (safe). The code scored is the
``inplace_lint`` the interpreter imports: run ``python -P`` with ``PYTHONPATH`` set to score
another checkout.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import signal
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

_MARKER = re.compile(r"#\s*<--\s*(IPL\d{3}(?:\s*,\s*IPL\d{3})*)\s*(?::.*)?$")
_LABEL = re.compile(r"^#\s*label:\s*(?P<labels>.+?)\s*$")


@dataclass
class Case:
    """One case file and its labels."""

    path: str
    label: str  # "hazard" or "safe"
    mode: str  # "raises", "silent" or ""
    twin: bool
    expected: frozenset[tuple[int, str]]


@dataclass
class Result:
    """What the checker said about one case."""

    case: Case
    confirmed: set[tuple[int, str]] = field(default_factory=set)
    elsewhere: list[str] = field(default_factory=list)  # confirmations in other files
    statuses: dict[int, str] = field(default_factory=dict)  # marked line -> checker's status
    error: str = ""
    seconds: float = 0.0


def read_case(path: Path) -> Case | None:
    """The case in ``path``, or ``None`` for a file that is not a case (a helper)."""
    source = path.read_text(encoding="utf-8")
    first = source.splitlines()[0] if source else ""
    match = _LABEL.match(first)
    if not match:
        return None
    words = match.group("labels").split()
    twin = "no-twin" not in words
    rest = [w for w in words if w != "no-twin"]
    label, mode = (rest[0], rest[1] if len(rest) > 1 else "")
    expected = set()
    for number, text in enumerate(source.splitlines(), start=1):
        found = _MARKER.search(text)
        if found:
            expected.update((number, code.strip()) for code in found.group(1).split(","))
    return Case(str(path), label, mode, twin, frozenset(expected))


def cases(paths: list[str]) -> Iterator[Case]:
    for given in map(Path, paths):
        for path in sorted(given.rglob("*.py")) if given.is_dir() else [given]:
            case = read_case(path)
            if case is not None:
                yield case


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


def score_case(job: tuple[Case, int]) -> Result:
    """Run the checker on one case in this (worker) process, within ``timeout`` seconds."""
    case, timeout = job
    result = Result(case)
    started = time.perf_counter()
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        from inplace_lint.checks import all_rules
        from inplace_lint.dynamic.core import check
        from inplace_lint.dynamic.targets import subject_for

        codes = [rule.code for rule in all_rules()]
        report = check(subject_for(case.path), codes=codes)
        here = os.path.abspath(case.path)
        for item in report.confirmed:
            if item.site.path == here:
                result.confirmed.add((item.site.line, item.code))
            else:
                result.elsewhere.append(f"{item.site.short()} {item.code}")
        lines = {line for line, _ in case.expected}
        for status in report.statuses:
            f = status.finding
            if f.line in lines and os.path.abspath(f.path) == here:
                detail = f" ({status.detail[:160]})" if status.detail else ""
                result.statuses[f.line] = f"{f.code} {status.status}{detail}"
    except _Timeout:
        result.error = f"timed out after {timeout} s"
    except BaseException as exc:  # BadInput and anything a broken case raises
        text = " ".join(str(exc).split())
        result.error = f"{type(exc).__name__}: {text[:240]}"
    finally:
        signal.alarm(0)
    result.seconds = time.perf_counter() - started
    return result


@dataclass
class Tally:
    """Counts for one folder (or all)."""

    hazards: int = 0
    hazard_hits: int = 0
    safe: int = 0
    safe_false: int = 0
    markers: int = 0
    markers_found: int = 0
    confirmations: int = 0
    correct: int = 0
    lines_found: int = 0  # markers whose line is confirmed with any code
    on_marked_lines: int = 0  # confirmations on a marked line, any code

    def add(self, result: Result) -> None:
        case, got = result.case, result.confirmed
        self.confirmations += len(got) + len(result.elsewhere)
        self.correct += len(got & case.expected)
        marked = {line for line, _ in case.expected}
        self.on_marked_lines += sum(line in marked for line, _ in got)
        self.lines_found += sum(any(g == line for g, _ in got) for line, _ in case.expected)
        if case.label == "safe":
            self.safe += 1
            self.safe_false += bool(got or result.elsewhere)
            return
        self.hazards += 1
        self.hazard_hits += case.expected <= got
        self.markers += len(case.expected)
        self.markers_found += len(case.expected & got)

    def line(self, name: str) -> str:
        def ratio(a: int, b: int) -> str:
            return f"{a / b:.3f}" if b else "n/a"

        return (
            f"{name:<28} hazard files confirmed {self.hazard_hits}/{self.hazards} "
            f"(recall {ratio(self.hazard_hits, self.hazards)}); markers "
            f"{self.markers_found}/{self.markers} ({ratio(self.markers_found, self.markers)}); "
            f"safe files with a false confirmation {self.safe_false}/{self.safe}; "
            f"precision {ratio(self.correct, self.confirmations)} "
            f"({self.correct}/{self.confirmations}); any code: marker recall "
            f"{ratio(self.lines_found, self.markers)}, precision "
            f"{ratio(self.on_marked_lines, self.confirmations)}"
        )


def _verdict(result: Result) -> str | None:
    """A line for a miss or a false confirmation; ``None`` when the case scored right."""
    case, got = result.case, result.confirmed
    tags = f"[{case.label} {case.mode}{'' if case.twin else ' no-twin'}]".replace(" ]", "]")
    wrong = sorted(got - case.expected) + result.elsewhere
    if case.label == "safe":
        if wrong:
            return f"FALSE {case.path} {tags} confirmed={wrong}"
        return f"ERROR {case.path} {tags} {result.error}" if result.error else None
    missing = sorted(case.expected - got)
    if not missing and not wrong:
        return None
    parts = [f"MISS  {case.path} {tags}" if missing else f"FALSE {case.path} {tags}"]
    if missing:
        why = result.error or "; ".join(
            f"line {line}: {result.statuses.get(line, 'no static finding on the line')}"
            for line in sorted({line for line, _ in missing})
        )
        parts.append(f"missing={missing} because {why}")
    if wrong:
        parts.append(f"wrong={wrong}")
    return " ".join(parts)


def _rescore_lost(context: object, results: list, args: argparse.Namespace) -> list:
    """The results again, those ended by a lost CUDA context scored anew, each case in a
    fresh process: after one case's device-side assert every later case of the same worker
    fails with the same CUDA error, which is not theirs."""
    try:
        from inplace_lint.dynamic.device import lost_device
    except ImportError:  # an older checkout scored (``PYTHONPATH``): nothing to rescore by
        return results
    lost = [i for i, r in enumerate(results) if r.error and lost_device(RuntimeError(r.error))]
    if not lost:
        return results
    with context.Pool(min(args.jobs, len(lost)), maxtasksperchild=1) as pool:  # type: ignore[attr-defined]
        again = pool.map(score_case, [(results[i].case, args.timeout) for i in lost], chunksize=1)
    results = list(results)
    for index, result in zip(lost, again, strict=True):
        results[index] = result
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="case files or folders of them")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (1)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per case (120)")
    args = parser.parse_args(argv)
    todo = list(cases(args.paths))
    started = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with context.Pool(args.jobs, maxtasksperchild=40) as pool:
        results = list(pool.imap(score_case, [(c, args.timeout) for c in todo], chunksize=4))
    results = _rescore_lost(context, results, args)
    folders: dict[str, Tally] = defaultdict(Tally)
    total = Tally()
    for result in results:
        folders[os.path.dirname(result.case.path)].add(result)
        total.add(result)
    import inplace_lint

    print(f"inplace_lint from {os.path.dirname(inplace_lint.__file__)}; {len(todo)} cases")
    for name in sorted(folders):
        print(folders[name].line(name))
    print(total.line("all"))
    print(f"wall time {time.perf_counter() - started:.0f} s with {args.jobs} job(s)")
    for result in results:
        verdict = _verdict(result)
        if verdict:
            print(verdict)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Check and score a round of held-out case files, written by authors who never saw the engine.

Each case is a runnable script in the format of ``tests/cases`` (first line ``# label: ...``,
``# <-- IPL00N`` markers on hazard lines). Two steps, run from the repository root::

    .venv/bin/python tools/heldout.py validate DIR...   # real torch agrees with every label
    .venv/bin/python tools/heldout.py score DIR...      # the static engine against the markers

``validate`` runs each case and its out-of-place twin with torch (the dev extra) and prints OK or
BAD with the reason; the authors iterate until every file is OK. ``score`` never runs the cases:
it lints them and prints, per file, HIT/MISS (hazards: every marked line and code reported) or
OK/FLAG (safe look-alikes: nothing reported), then the totals, with the number of hazard files
that also get a finding on a line or code their author did not mark. Exit status: 1 when any file is
BAD (validate), else 0.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from harness import _make, compare, parse_markers, run_example  # noqa: E402

from inplace_lint.checks import all_rules  # noqa: E402
from inplace_lint.engine import lint_source  # noqa: E402
from inplace_lint.facts.calls import CONSTRUCTION_NOTE  # noqa: E402
from inplace_lint.finding import Finding  # noqa: E402

#: Largest output difference that still counts as "the same" between a case and its twin.
TOLERANCE = 1e-6


def _files(paths: list[str]) -> Iterator[Path]:
    for given in map(Path, paths):
        yield from sorted(given.rglob("*.py")) if given.is_dir() else [given]


def problem(path: Path) -> str:
    """Why torch disagrees with the case's label, or ``""`` when it agrees."""
    from inplace_lint.dynamic.twin import out_of_place_twin

    source = path.read_text(encoding="utf-8")
    first = source.splitlines()[0] if source else ""
    if not first.startswith("# label:"):
        return "the first line must be '# label: ...'"
    try:
        case = _make(str(path), source, first.split(":", 1)[1].split())
    except ValueError as exc:
        return str(exc)
    original = run_example(source, str(path))
    lines = None if case.label == "safe" else case.marked_lines
    if case.label == "hazard" and case.mode == "raises":
        if original.error_type is None or not issubclass(original.error_type, RuntimeError):
            return f"expected a RuntimeError, got {original.error!r}"
        if case.twin and not run_example(out_of_place_twin(source, lines=lines), "twin").ok:
            return "the out-of-place twin (marked lines rewritten) fails too"
        return ""
    if not original.ok:
        return f"the case fails: {original.error}"
    if not case.twin:
        return ""
    twin = run_example(out_of_place_twin(source, lines=lines), "twin")
    if not twin.ok:
        return f"the out-of-place twin fails: {twin.error}"
    difference = compare(original, twin)
    if difference is None:
        return "the case leaves no tensors at module level to compare"
    if case.mode == "silent" and difference <= TOLERANCE:
        return "a silent hazard, but the out-of-place twin computes the same results"
    if case.label == "safe" and difference > TOLERANCE:
        return f"a safe case, but the out-of-place twin differs by {difference:.3g}"
    return ""


def validate(paths: list[str]) -> int:
    bad = 0
    for path in _files(paths):
        why = problem(path)
        bad += bool(why)
        print(f"BAD  {path}: {why}" if why else f"OK   {path}")
    return 1 if bad else 0


def score(paths: list[str], construction: bool = False) -> int:
    """Lint every case; print a verdict per file, then file-level and finding-level figures."""
    codes = frozenset(rule.code for rule in all_rules()) - {"IPL008"}
    tally = _Tally()
    for path in _files(paths):
        source = path.read_text(encoding="utf-8")
        if not source.startswith("# label:"):
            continue  # not a case (a helper script beside them)
        expected = parse_markers(source)
        found = lint_source(source, str(path), codes | {code for _, code in expected})
        got = {(f.line, f.code) for f in found}
        if construction:
            got = {_at_marker(f, expected) for f in found}
        print(tally.add(path, expected, got))
    print(tally.summary())
    return 0


def _at_marker(finding: Finding, expected: set[tuple[int, str]]) -> tuple[int, str]:
    """(line, code) of ``finding``, taken at the module's construction when the finding is an
    in-place module's call (reported where it runs, with the construction as a related
    location) and its author marked the construction: the case instructions allow either."""
    for related in finding.related:
        at = (related.position.line, finding.code)
        if related.message.endswith(CONSTRUCTION_NOTE) and at in expected:
            return at
    return (finding.line, finding.code)


class _Tally:
    """Counts for :func:`score`: files, markers and findings."""

    def __init__(self) -> None:
        self.hazards = self.hits = self.extra = self.safe = self.clean = 0
        self.markers = self.found_markers = self.found_lines = 0
        self.findings = self.true_findings = self.true_line_findings = 0

    def add(self, path: Path, expected: set[tuple[int, str]], got: set[tuple[int, str]]) -> str:
        """Count one case; its verdict line."""
        lines = {line for line, _ in expected}
        self.markers += len(expected)
        self.found_markers += len(expected & got)
        self.found_lines += sum(any(g[0] == line for g in got) for line, _ in expected)
        self.findings += len(got)
        self.true_findings += len(got & expected)
        self.true_line_findings += sum(line in lines for line, _ in got)
        if not expected:
            self.safe += 1
            self.clean += not got
            return f"{'OK  ' if not got else 'FLAG'} {path} got={sorted(got)}"
        self.hazards += 1
        hit = expected <= got
        self.hits += hit
        self.extra += bool(got - expected)
        return f"{'HIT ' if hit else 'MISS'} {path} expected={sorted(expected)} got={sorted(got)}"

    def summary(self) -> str:
        def ratio(a: int, b: int) -> str:
            return f"{a / b:.2f}" if b else "n/a"

        return (
            f"hazards found on their marked lines: {self.hits}/{self.hazards}; safe files clean: "
            f"{self.clean}/{self.safe}; hazard files with unmarked findings: {self.extra}\n"
            f"markers: {self.markers}; recall (line and code) "
            f"{ratio(self.found_markers, self.markers)}, (line, any code) "
            f"{ratio(self.found_lines, self.markers)}; findings: {self.findings}; precision "
            f"(line and code) {ratio(self.true_findings, self.findings)}, (marked line, any "
            f"code) {ratio(self.true_line_findings, self.findings)}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("validate", "score"))
    parser.add_argument("paths", nargs="+", help="case files or folders of them")
    parser.add_argument(
        "--construction",
        action="store_true",
        help="score: a finding at an in-place module's call also matches a marker on the "
        "module's construction (the case instructions let authors mark either)",
    )
    args = parser.parse_args(argv)
    if args.step == "validate":
        return validate(args.paths)
    return score(args.paths, args.construction)


if __name__ == "__main__":
    raise SystemExit(main())

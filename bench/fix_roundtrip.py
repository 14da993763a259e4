"""Round trip of the autofix: fix every case with the real CLI, run the result with torch.

For each case folder (default: every subfolder of ``tests/cases`` and of
``bench/rounds/round6``) the files are copied to a temporary folder three times; one copy is
linted (``--format json``), one fixed with ``--fix``, one with ``--fix --unsafe-fixes``, one
CLI process each, with no cache and no configuration. Then each fixed hazard case runs under
torch next to its out-of-place reference (the case with its marked lines rewritten by
``inplace_lint.dynamic.twin``, as ``tools/heldout.py validate`` builds it):

* a fix *repairs* a hazard when the fixed file parses, runs without an error and computes what
  the reference computes (largest difference ``<= TOLERANCE`` over the tensors both leave at
  module level); a ``raises`` case without a twin (``no-twin``) only has to run;
* a safe case *changes behaviour* under a fix when the fixed file fails where the original
  ran, or computes other values.

Rates are given over every hazard case and over the *detected* ones (the static engine reports
something on a marked line with the default codes): an undetected hazard cannot be fixed.

Run from anywhere; the code under test is whatever ``inplace_lint`` this interpreter imports,
so the pristine tree is measured with::

    cd /work/base16 && PYTHONPATH=/work/base16 /work/main/.venv/bin/python -P \\
        /work/main/bench/fix_roundtrip.py

Each folder's log line gives the CLI's summary, its standard error (fixes that failed
verification) and how many files a second ``--fix`` would change (it must be 0).

Options: ``--jobs N`` torch worker processes (default 1), ``-v`` one line per case that is
not repaired (or changed behaviour), ``FOLDER...`` other case folders.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the harness only; inplace_lint comes from the path
os.environ.setdefault("OMP_NUM_THREADS", "1")

from harness import Outcome, _make, compare, run_example  # noqa: E402

TOLERANCE = 1e-5
#: Seconds one run of a case may take before it counts as failing.
RUN_LIMIT = 120
MODES = ("safe", "unsafe")


@dataclass
class Case:
    """One case file, its three texts and what was measured."""

    folder: str
    origin: str
    label: str
    mode: str
    twin: bool
    marked: set[int]
    source: str
    fixed: dict[str, str] = field(default_factory=dict)
    detected: bool = False
    verdict: dict[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------- the CLI part


def _cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-P", "-m", "inplace_lint", *args, "--no-cache", "--isolated"]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def _load(folder: Path, name: str) -> list[Case]:
    cases = []
    for path in sorted(folder.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        first = source.splitlines()[0] if source else ""
        if not first.startswith("# label:"):
            continue
        example = _make(str(path), source, first.split(":", 1)[1].split())
        origin = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
        cases.append(
            Case(
                name,
                origin,
                example.label,
                example.mode,
                example.twin,
                example.marked_lines,
                source,
            )
        )
    return cases


def fix_folder(folder: Path, name: str, log: list[str]) -> list[Case]:
    """Lint and fix copies of ``folder`` with the CLI; the cases with their fixed texts."""
    cases = _load(folder, name)
    with tempfile.TemporaryDirectory(prefix="fix-roundtrip-") as tmp:
        copies = {kind: Path(tmp) / kind for kind in ("lint", *MODES)}
        for copy in copies.values():
            shutil.copytree(folder, copy)
        lint = _cli(["check", "--format", "json", "--exit-zero", str(copies["lint"])])
        found = json.loads(lint.stdout or "[]")
        hit: set[tuple[str, int]] = set()
        for finding in found:
            relative = Path(finding["path"]).resolve().relative_to(copies["lint"].resolve())
            hit.add((relative.as_posix(), finding["line"]))
        for kind in MODES:
            extra = ["--unsafe-fixes"] if kind == "unsafe" else []
            done = _cli(["check", "--fix", *extra, str(copies[kind])])
            tail = [line for line in done.stderr.splitlines() if line.strip()]
            summary = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
            again = _cli(["check", "--diff", *extra, str(copies[kind])])
            second = sum(line.startswith("--- a/") for line in again.stdout.splitlines())
            log.append(
                f"{name} --fix{' --unsafe-fixes' if extra else ''}: "
                + " | ".join([*summary, *tail[-3:], f"a second run would change {second} files"])
            )
        for case in cases:
            relative = (ROOT / case.origin).resolve().relative_to(folder.resolve()).as_posix()
            case.detected = any((relative, line) in hit for line in case.marked)
            for kind in MODES:
                case.fixed[kind] = (copies[kind] / relative).read_text(encoding="utf-8")
    return cases


# --------------------------------------------------------------------------- the torch part


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError(f"ran past {RUN_LIMIT} s")


_RUNS: dict[str, Outcome] = {}


def _run(source: str, name: str) -> Outcome:
    if source not in _RUNS:
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(RUN_LIMIT)
        try:
            _RUNS[source] = run_example(source, name)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt from a case
            _RUNS[source] = Outcome(f"{type(exc).__name__}: {exc}", type(exc))
        finally:
            signal.alarm(0)
    return _RUNS[source]


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def judge(case: Case) -> dict[str, str]:
    """Each mode's verdict: repaired / unchanged / unparseable / fails / differs (hazards),
    kept / unchanged / unparseable / changed (safe cases)."""
    from inplace_lint.dynamic.twin import out_of_place_twin

    verdicts: dict[str, str] = {}
    reference: Outcome | None = None
    for kind in MODES:
        text = case.fixed[kind]
        if text == case.source:
            verdicts[kind] = "unchanged"
            continue
        if not _parses(text):
            verdicts[kind] = "unparseable"
            continue
        outcome = _run(text, f"{case.origin} ({kind} fix)")
        if case.label == "safe":
            original = _run(case.source, case.origin)
            same = original.ok == outcome.ok and (
                not original.ok or (compare(original, outcome) or 0.0) <= TOLERANCE
            )
            verdicts[kind] = "kept" if same else "changed"
            continue
        if not outcome.ok:
            verdicts[kind] = "fails: " + (outcome.error or "")[:100]
            continue
        if not case.twin:
            verdicts[kind] = "repaired" if case.mode == "raises" else "differs"
            continue
        if reference is None:
            twin = out_of_place_twin(case.source, lines=case.marked)
            reference = _run(twin, f"{case.origin} (reference)")
        difference = compare(outcome, reference) if reference.ok else None
        if difference is None:
            repaired = case.mode == "raises" and reference.ok
        else:
            repaired = difference <= TOLERANCE
        verdicts[kind] = "repaired" if repaired else f"differs: {difference}"
    return verdicts


def judge_all(cases: list[Case], jobs: int) -> None:
    if jobs <= 1:
        for case in cases:
            case.verdict = judge(case)
        return
    with ProcessPoolExecutor(jobs) as pool:
        for case, verdict in zip(cases, pool.map(judge, cases, chunksize=4), strict=True):
            case.verdict = verdict


# --------------------------------------------------------------------------- the report


def _rate(cases: Iterable[Case], kind: str) -> str:
    chosen = list(cases)
    good = sum(c.verdict[kind] == "repaired" for c in chosen)
    share = f"{100 * good / len(chosen):.0f}%" if chosen else "-"
    return f"{good}/{len(chosen)} {share}"


def table(rows: list[tuple[str, list[Case]]]) -> str:
    head = (
        f"{'folder':<18} {'hazards':>7} {'detected':>8}  {'--fix all':>12} {'--fix det.':>12}"
        f"  {'unsafe all':>12} {'unsafe det.':>12}  {'unparseable':>11} {'safe changed':>12}"
    )
    out = [head]
    for name, cases in rows:
        hazards = [c for c in cases if c.label == "hazard"]
        detected = [c for c in hazards if c.detected]
        safe = [c for c in cases if c.label == "safe"]
        unparseable = sum(v == "unparseable" for c in cases for v in c.verdict.values())
        changed = sum(c.verdict["safe"] == "changed" for c in safe)
        out.append(
            f"{name:<18} {len(hazards):>7} {len(detected):>8}  {_rate(hazards, 'safe'):>12} "
            f"{_rate(detected, 'safe'):>12}  {_rate(hazards, 'unsafe'):>12} "
            f"{_rate(detected, 'unsafe'):>12}  {unparseable:>11} {changed:>5}/{len(safe):<6}"
        )
    return "\n".join(out)


def _folders(given: list[str]) -> list[tuple[str, str, Path]]:
    """``(group, name, path)`` for each folder to measure."""
    if given:
        return [("given", Path(p).name, Path(p)) for p in given]
    found = []
    for group, base in (
        ("tests/cases", ROOT / "tests/cases"),
        ("round6", ROOT / "bench/rounds/round6"),
    ):
        for sub in sorted(p for p in base.iterdir() if p.is_dir()):
            found.append((group, f"{group.split('/')[-1]}/{sub.name}", sub))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", help="case folders (default: the cases and round6)")
    parser.add_argument("--jobs", type=int, default=1, help="torch worker processes")
    parser.add_argument("-v", "--verbose", action="store_true", help="list each miss")
    args = parser.parse_args(argv)
    import inplace_lint

    print(f"code under test: {Path(inplace_lint.__file__).parent}", flush=True)
    began = time.perf_counter()
    log: list[str] = []
    groups: dict[str, list[Case]] = {}
    rows: list[tuple[str, list[Case]]] = []
    for group, name, path in _folders(args.folders):
        cases = fix_folder(path, name, log)
        rows.append((name, cases))
        groups.setdefault(group, []).extend(cases)
    everything = [case for _, cases in rows for case in cases]
    judge_all(everything, args.jobs)
    for group, cases in groups.items():
        rows.append((f"= {group}", cases))
    print(table(rows))
    print("\n".join(log))
    if args.verbose:
        for case in everything:
            shown = {k: v for k, v in case.verdict.items() if v not in ("repaired", "kept")}
            if case.label == "safe" and all(v in ("unchanged", "kept") for v in shown.values()):
                continue
            if shown:
                seen = "detected" if case.detected else "undetected"
                print(f"  {case.origin} [{case.label} {case.mode} {seen}] {shown}")
    print(f"{len(everything)} cases in {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

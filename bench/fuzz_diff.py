"""Differential fuzzing: inplace-lint against torch on generated programs.

``tools/progen.py`` generates small PyTorch programs with in-place statements and their
out-of-place twins; torch gives the ground truth here (the linter never does), then the linter
is scored against it and each kind of disagreement is shrunk by hypothesis to a minimal program::

    .venv/bin/python bench/fuzz_diff.py --n 2000 --seed 0     # the full run (1-2 minutes)
    .venv/bin/python bench/fuzz_diff.py --n 100 --shrink 0    # a quick check

Labels: ``raises`` (the program raises a RuntimeError and its twin does not), ``silent`` (both
run, but a module-level tensor, gradient or module state differs by more than 1e-6, relative
above 1), ``safe`` (both run and agree); anything else is ``invalid`` and discarded with
hypothesis ``assume``. The culprits of a hazard are the in-place statements whose flip alone
removes the error (then the next error, and any difference left) or makes the run agree with
the twin; failing that, those whose flip changes the outcome; failing that, all of them. A
finding counts as right on a culprit's line or on a line that runs it (a helper or module call,
a hook registration).

Programs run in a worker process (``--worker``) with torch on one thread, restarted after a
crash or a timeout (the program is then ``invalid``). ``--linter DIR`` scores the inplace_lint
in DIR instead of this checkout's. Shrunk programs, the report and every sample go to
``bench/fuzz_out/``; first figures: ``bench/FUZZ.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import re
import select
import subprocess
import sys
import time
import traceback
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT, ROOT / "tools"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

TOLERANCE = 1e-6
Run = tuple[str | None, str, dict[str, Any]]  # error type, message@line, snapshot
ERROR_FAMILIES = (
    ("modified by an inplace operation", "saved"),
    ("leaf Variable", "leaf"),
    ("out=", "out="),
    ("single memory location", "overlap"),
    ("is a view", "view"),
    ("created in no_grad mode", "nograd-view"),
    ("not have been used in the graph", "unused-target"),
)
EXPECTED = {
    "raises": frozenset({"IPL001", "IPL003", "IPL005", "IPL006"}),
    "silent": frozenset({"IPL002", "IPL004", "IPL007"}),
}


# -- the worker: runs programs with torch ------------------------------------------------------
def _run(source: str) -> Run:
    """Run ``source`` as ``__main__`` in fresh globals: (error type, message@line, snapshot)."""
    import torch

    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    grad_mode = torch.is_grad_enabled()
    try:
        random.seed(0)
        torch.manual_seed(0)
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            exec(compile(source, "<prog>", "exec"), namespace)
    except Exception as exc:
        frames = traceback.walk_tb(exc.__traceback__)
        lines = [line for frame, line in frames if frame.f_code.co_filename == "<prog>"]
        return type(exc).__name__, f"{str(exc)[:400]}@{lines[-1] if lines else 0}", {}
    finally:
        torch.set_grad_enabled(grad_mode)
    return None, "", _snapshot(namespace)


def _snapshot(namespace: dict[str, Any]) -> dict[str, Any]:
    """Module-level tensors (also in lists, tuples, dicts), leaf gradients, module state."""
    import torch
    from torch import nn

    values: dict[str, torch.Tensor] = {}

    def keep(key: str, value: object) -> None:
        if isinstance(value, torch.Tensor) and value.layout == torch.strided:
            values[key] = value.detach().clone()
            if value.is_leaf and value.grad is not None:
                values[key + ".grad"] = value.grad.detach().clone()
        elif isinstance(value, nn.Module):
            for name, tensor in [*value.named_parameters(), *value.named_buffers()]:
                keep(f"{key}.{name}", tensor)

    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        if isinstance(value, list | tuple):
            for index, item in enumerate(value):
                keep(f"{name}[{index}]", item)
        elif isinstance(value, dict):
            for item_key, item in value.items():
                keep(f"{name}[{item_key!r}]", item)
        else:
            keep(name, value)
    return values


def _diff(one: dict[str, Any], two: dict[str, Any]) -> float:
    """Largest difference, relative where values exceed 1; NaN matches NaN; inf if incomparable."""
    import torch

    worst = 0.0
    for key in one.keys() | two.keys():
        a, b = one.get(key), two.get(key)
        if a is None or b is None or a.shape != b.shape or a.dtype != b.dtype:
            return math.inf
        a, b = a.double(), b.double()
        same = (a == b) | (a.isnan() & b.isnan())
        if a.numel() == 0 or bool(same.all()):
            continue
        scale = torch.maximum(a.abs(), b.abs()).clamp(min=1.0)
        gap = float(((a - b).abs() / scale).masked_fill(same, 0.0).max())
        worst = max(worst, math.inf if math.isnan(gap) else gap)
    return worst


def _raising(program: Any, error: str) -> tuple[list[int], Run | None]:
    """The in-place statements behind an error, one error after another, and the clean run.

    The statements whose flip alone makes the run succeed are the culprits; failing that, those
    whose flip moves or changes the error (the first of several errors) are, and the search goes
    on with them flipped. Gives up (no clean run) when no flip changes anything.
    """
    fixed: list[int] = []
    while True:
        changed: list[int] = []
        clean: list[tuple[int, Run]] = []
        for sid in sorted(set(program.sids) - set(fixed)):
            run = _run(program.source({*fixed, sid}))
            if run[0] is None:
                clean.append((sid, run))
            elif run[1] != error:
                changed.append(sid)
        if len(clean) == 1:
            return [*fixed, clean[0][0]], clean[0][1]
        if clean:
            fixed += [sid for sid, _ in clean]
            run = _run(program.source(fixed))
            return fixed, run if run[0] is None else None
        if not changed:
            return fixed, None
        fixed += changed
        run = _run(program.source(fixed))
        if run[0] is None:
            return fixed, run
        error = run[1]


def _differing(program: Any, fixed: list[int], base: Run, twin: Run) -> list[int]:
    """Statements whose flip (with ``fixed`` flipped) makes ``base`` agree with the twin, or
    failing that, change it."""
    agree: list[int] = []
    changed: list[int] = []
    for sid in sorted(set(program.sids) - set(fixed)):
        err, _, snap = _run(program.source({*fixed, sid}))
        if err is None and _diff(snap, twin[2]) <= TOLERANCE:
            agree.append(sid)
        elif err is not None or _diff(snap, base[2]) > TOLERANCE:
            changed.append(sid)
    return agree or changed


def _judge(program: Any) -> dict[str, Any]:
    """The label of one ``progen.Program`` and the ids of its culprit statements.

    The culprits of a program that raises include, once its errors are flipped away, those
    of any silent difference that remains.
    """
    orig, twin = _run(program.source()), _run(program.twin())
    if orig[0] not in (None, "RuntimeError"):
        return {"label": "invalid", "detail": f"{orig[0]}: {orig[1]}"}
    if twin[0] is not None:
        return {"label": "invalid", "detail": f"twin {twin[0]}: {twin[1]}"}
    label, detail, family = "safe", "", ""
    fixed: list[int] = []
    base: Run | None = orig
    if orig[0] is not None:
        label, detail = "raises", orig[1]
        family = next((name for text, name in ERROR_FAMILIES if text in orig[1]), "other")
        fixed, base = _raising(program, orig[1])
    gap = _diff(base[2], twin[2]) if base is not None else 0.0
    if gap > TOLERANCE:
        fixed += _differing(program, fixed, base, twin)  # type: ignore[arg-type]
        if label == "safe":
            label, detail = "silent", f"differs by {gap:.3g}"
    return {"label": label, "culprits": fixed, "detail": detail, "family": family}


def _worker() -> None:
    """Answer one JSON request a line on stdin with one JSON verdict a line on stdout."""
    import torch

    torch.set_num_threads(1)
    # CPU only: seeding the CPU generator is all of torch.manual_seed, which would also queue
    # a lazy CUDA/XPU/MTIA seeding call with a formatted stack, for every run (2-3 ms, and a leak)
    torch.manual_seed = torch.default_generator.manual_seed  # type: ignore[assignment]
    out = os.fdopen(os.dup(1), "w")
    sys.stdout = sys.stderr
    from progen import Line, Program

    for request in sys.stdin:
        lines = tuple(
            Line(i, text, tuple(twin) if twin else None, sid)
            for i, text, twin, sid in json.loads(request)
        )
        out.write(json.dumps(_judge(Program(lines, frozenset()))) + "\n")
        out.flush()


# -- the client ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """Torch's ground truth for one program."""

    label: str  # "raises" | "silent" | "safe" | "invalid"
    culprits: tuple[int, ...] = ()  # in-place statement ids
    detail: str = ""  # the error message, the difference, or why invalid
    family: str = ""  # raises: saved, leaf, out=, overlap, view, nograd-view, unused-target, other


class Labeller:
    """Labels programs in a torch worker process; restarts it after a crash or a timeout."""

    def __init__(self, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.cache: dict[str, Verdict] = {}
        self.proc: subprocess.Popen[bytes] | None = None
        self.buffer = b""

    def __enter__(self) -> Labeller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def _ask(self, job: Any) -> dict[str, Any] | None:
        if self.proc is None:
            command = [sys.executable, str(Path(__file__).resolve()), "--worker"]
            self.proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
            self.buffer = b""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(job).encode() + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + self.timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            chunk = (
                os.read(fd, 1 << 16) if left > 0 and select.select([fd], [], [], left)[0] else b""
            )
            if not chunk:  # timeout or crash
                self.close()
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def label(self, program: Any, cache: bool = True) -> Verdict:
        """Torch's verdict on a ``progen.Program`` (cached by source unless ``cache=False``)."""
        source = program.source()
        if cache and source in self.cache:
            return self.cache[source]
        job = [[line.indent, line.text, line.twin, line.sid] for line in program.lines]
        answer = self._ask(job)
        if answer is None:
            verdict = Verdict("invalid", detail="crashed or timed out")
        elif answer["label"] in ("invalid", "safe"):
            verdict = Verdict(answer["label"], detail=answer["detail"])
        else:
            culprits = tuple(answer["culprits"]) or tuple(sorted(program.sids))
            verdict = Verdict(answer["label"], culprits, answer["detail"], answer["family"])
        if cache:
            self.cache[source] = verdict
        return verdict


# -- scoring ---------------------------------------------------------------------------------------
@dataclass
class Sample:
    """One labelled, linted program."""

    program: Any
    verdict: Verdict
    findings: tuple[tuple[int, str], ...]
    choices: tuple[Any, ...] = ()

    @property
    def hazard(self) -> bool:
        return self.verdict.label in EXPECTED

    @property
    def sites(self) -> set[int]:
        return self.program.sites(self.verdict.culprits) if self.hazard else set()

    @property
    def true(self) -> int:
        return sum(line in self.sites for line, _ in self.findings)

    @property
    def hit(self) -> bool:
        return self.true > 0

    def hit_kind(self) -> bool:
        codes = EXPECTED.get(self.verdict.label, frozenset())
        return any(line in self.sites and code in codes for line, code in self.findings)

    def family(self) -> str | None:
        """How the linter disagrees with torch here (None: it agrees)."""
        if not self.hazard:
            codes = sorted({code for _, code in self.findings})
            return f"false-alarm/{'+'.join(codes)}" if codes else None
        if not self.hit:
            first = self.verdict.culprits[0]
            why = self.verdict.family or self.program.tag(first)
            return f"miss/{self.verdict.label}/{why}"
        off = sorted({code for line, code in self.findings if line not in self.sites})
        return f"off-line/{'+'.join(off)}" if off else None


class Linter:
    """The linter's public API, cached by source."""

    def __init__(self) -> None:
        from inplace_lint.checks import all_rules
        from inplace_lint.engine import lint_source

        self.lint_source = lint_source
        self.codes = frozenset(rule.code for rule in all_rules()) - {"IPL008"}
        self.cache: dict[str, tuple[tuple[int, str], ...]] = {}
        self.seconds = 0.0

    def __call__(self, source: str) -> tuple[tuple[int, str], ...]:
        if source not in self.cache:
            start = time.perf_counter()
            found = self.lint_source(source, "prog.py", self.codes)
            self.cache[source] = tuple(sorted((f.line, f.code) for f in found))
            self.seconds += time.perf_counter() - start
        return self.cache[source]


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.3f}" if den else "  -  "


def figures(samples: list[Sample]) -> dict[str, Any]:
    """Counts, precision and recall (finding-level and file-level) over some samples."""
    hazards = [s for s in samples if s.hazard]
    safe = [s for s in samples if not s.hazard]
    findings = sum(len(s.findings) for s in samples)
    true = sum(s.true for s in hazards)
    flagged = [s for s in samples if s.findings]
    return {
        "programs": len(samples),
        "hazards": len(hazards),
        "safe": len(safe),
        "findings": findings,
        "precision": _ratio(true, findings),
        "recall": _ratio(sum(s.hit for s in hazards), len(hazards)),
        "file_precision": _ratio(sum(s.hazard for s in flagged), len(flagged)),
        "file_recall": _ratio(sum(bool(s.findings) for s in hazards), len(hazards)),
        "false_alarm_rate": _ratio(sum(bool(s.findings) for s in safe), len(safe)),
    }


def report(samples: list[Sample]) -> list[str]:
    """The printed (and Markdown) report of one run."""
    labels = Counter(s.verdict.label for s in samples)
    overall = figures(samples)
    out = [f"programs: {len(samples)}  " + "  ".join(f"{k}: {labels[k]}" for k in EXPECTED)]
    out[-1] += f"  safe: {labels['safe']}"
    errors = Counter(s.verdict.family for s in samples if s.verdict.label == "raises")
    out.append("raises by error: " + ", ".join(f"{k} {v}" for k, v in errors.most_common()))
    out.append(
        f"precision {overall['precision']} ({overall['findings']} findings)  recall "
        f"{overall['recall']}  |  file-level precision {overall['file_precision']} recall "
        f"{overall['file_recall']}  |  safe programs flagged {overall['false_alarm_rate']}"
    )
    for label, codes in EXPECTED.items():
        group = [s for s in samples if s.verdict.label == label]
        strict = sum(s.hit_kind() for s in group)
        out.append(
            f"recall on {label} with {'/'.join(sorted(codes))}: {_ratio(strict, len(group))}"
        )
    out += ["", "| feature | programs | hazards | recall | findings | precision | safe flagged |"]
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    by_feature: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        for feature in sample.program.features:
            by_feature[feature].append(sample)
    for feature, group in sorted(by_feature.items(), key=lambda kv: -len(kv[1])):
        f = figures(group)
        out.append(
            f"| {feature} | {f['programs']} | {f['hazards']} | {f['recall']} | {f['findings']} "
            f"| {f['precision']} | {f['false_alarm_rate']} |"
        )
    out += ["", "| culprit form | hazards | recall |", "|---|---:|---:|"]
    by_form: dict[str, list[Sample]] = defaultdict(list)
    for sample in (s for s in samples if s.hazard):
        for form in {sample.program.tag(sid) for sid in sample.verdict.culprits}:
            by_form[f"{sample.verdict.label}/{form}"].append(sample)
    for form, group in sorted(by_form.items(), key=lambda kv: -len(kv[1])):
        out.append(f"| {form} | {len(group)} | {_ratio(sum(s.hit for s in group), len(group))} |")
    families = Counter(s.family() for s in samples if s.family())
    out += ["", "disagreements: " + ", ".join(f"{k} {v}" for k, v in families.most_common())]
    return out


# -- generation and shrinking ----------------------------------------------------------------------
def collect(n: int, seed: int, labeller: Labeller, linter: Linter) -> tuple[list[Sample], Counter]:
    """``n`` distinct valid programs from hypothesis's generation under ``seed``."""
    from hypothesis import HealthCheck, Phase, given, reject, settings
    from hypothesis import seed as fix_seed
    from hypothesis.control import current_build_context
    from progen import programs

    samples: list[Sample] = []
    seen: set[str] = set()
    skipped: Counter = Counter()

    @settings(
        max_examples=n,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @fix_seed(seed)
    @given(programs())
    def gather(program: Any) -> None:
        source = program.source()
        if source in seen:
            skipped["duplicate"] += 1
            reject()
        verdict = labeller.label(program)
        if verdict.label == "invalid":
            skipped[f"invalid: {re.sub(r'[0-9]+', 'N', verdict.detail)[:70]}"] += 1
            reject()
        seen.add(source)
        choices = tuple(current_build_context().data.choices)
        samples.append(Sample(program, verdict, linter(source), choices))

    gather()
    return samples, skipped


def shrink(sample: Sample, labeller: Labeller, linter: Linter, seconds: float) -> Sample:
    """A minimal program that disagrees with torch in the same way as ``sample``.

    The sample's choice sequence goes into an in-memory example database, so ``hypothesis.find``
    replays it first and then shrinks it; after ``seconds`` the predicate refuses everything new,
    which ends the shrink with the smallest program found so far.
    """
    from hypothesis import Phase, find, settings
    from hypothesis.database import InMemoryExampleDatabase, choices_to_bytes
    from hypothesis.errors import NoSuchExample, Unsatisfiable
    from progen import programs

    wanted = sample.family()
    deadline = time.monotonic() + seconds
    database = InMemoryExampleDatabase()
    key = f"fuzz_diff/{wanted}".encode()
    # the secondary corpus: hypothesis takes a primary entry as shrunk already
    database.save(key + b".secondary", choices_to_bytes(sample.choices))

    def same_way(program: Any) -> bool:
        if time.monotonic() > deadline:
            return False
        verdict = labeller.label(program)
        source = program.source()
        return (
            verdict.label != "invalid"
            and Sample(program, verdict, linter(source)).family() == wanted
        )

    options = settings(database=database, max_examples=1, phases=[Phase.reuse, Phase.shrink])
    try:
        program = find(programs(), same_way, settings=options, database_key=key)
    except (NoSuchExample, Unsatisfiable):
        return sample
    source = program.source()
    return Sample(program, labeller.label(program), linter(source))


def describe(sample: Sample) -> str:
    """A shrunk program as a commented file: what torch said, what the linter said."""
    verdict = sample.verdict
    lines = [
        f"# disagreement: {sample.family()}",
        f"# torch: {verdict.label}" + (f" ({verdict.family})" if verdict.family else ""),
    ]
    if verdict.detail:
        lines.append(f"# torch detail: {verdict.detail.splitlines()[0][:150]}")
    if sample.hazard:
        lines.append(f"# culprit lines (and their call sites): {sorted(sample.sites)}")
    found = ", ".join(f"{code}@{line}" for line, code in sample.findings) or "nothing"
    lines.append(f"# linter: {found}")
    return "\n".join(lines) + "\n" + sample.program.source()


def shrink_families(
    samples: list[Sample], labeller: Labeller, linter: Linter, args: argparse.Namespace
) -> list[Sample]:
    """Shrink ``args.shrink`` (the smallest) representatives of ``args.families`` disagreements,
    taking the commonest miss, false alarm and off-line finding in turn."""
    groups: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        if sample.family():
            groups[sample.family() or ""].append(sample)
    kinds: dict[str, list[list[Sample]]] = defaultdict(list)  # miss, false-alarm, off-line
    for name, group in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        kinds[name.split("/")[0]].append(group)
    rounds = zip_longest(*kinds.values())  # the commonest of each kind, then the next ones
    ranked = [group for row in rounds for group in row if group][: args.families]
    shrunk: list[Sample] = []
    for group in ranked:
        group.sort(key=lambda s: len(s.program.source()))
        for sample in group[: args.shrink]:
            shrunk.append(shrink(sample, labeller, linter, args.shrink_seconds))
    return shrunk


def write_out(
    folder: Path, lines: list[str], samples: list[Sample], shrunk: list[Sample], header: str
) -> None:
    """The shrunk programs, the report, and every sample (``samples.jsonl``) under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "samples.jsonl").open("w", encoding="utf-8") as out:
        for sample in samples:
            verdict = sample.verdict
            record = {
                "label": verdict.label,
                "error": verdict.family,
                "detail": verdict.detail,
                "culprit_lines": sorted(sample.sites),
                "findings": sample.findings,
                "disagreement": sample.family(),
                "features": sorted(sample.program.features),
                "source": sample.program.source(),
            }
            out.write(json.dumps(record) + "\n")
    for old in folder.glob("*.py"):
        old.unlink()
    for index, sample in enumerate(shrunk, 1):
        slug = re.sub(r"[^a-z0-9]+", "-", (sample.family() or "agrees").lower()).strip("-")
        (folder / f"{index:02d}-{slug}.py").write_text(describe(sample), encoding="utf-8")
    (folder / "summary.md").write_text(header + "\n\n" + "\n".join(lines) + "\n", encoding="utf-8")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="programs to generate and label")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis generation seed")
    parser.add_argument("--shrink", type=int, default=1, help="programs shrunk per disagreement")
    parser.add_argument("--families", type=int, default=9, help="disagreement kinds to shrink")
    parser.add_argument("--shrink-seconds", type=float, default=25.0, help="budget per shrink")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "fuzz_out")
    parser.add_argument("--linter", type=Path, help="a folder with another inplace_lint to score")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.worker:
        _worker()
        return 0
    if args.linter:
        sys.path.insert(0, str(args.linter.resolve()))
    start = time.perf_counter()
    linter = Linter()
    with Labeller() as labeller:
        samples, skipped = collect(args.n, args.seed, labeller, linter)
        generated = time.perf_counter() - start
        lines = report(samples)
        skipped_text = ", ".join(f"{k} {v}" for k, v in skipped.most_common(6))
        lines.insert(1, f"discarded while generating: {skipped_text or 'none'}")
        print("\n".join(lines), flush=True)
        shrink_start = time.perf_counter()
        shrunk = shrink_families(samples, labeller, linter, args) if args.shrink else []
    total = time.perf_counter() - start
    timing = (
        f"time: {total:.0f} s in all; generate+label+lint {generated:.0f} s "
        f"(lint {linter.seconds:.0f} s), shrink {time.perf_counter() - shrink_start:.0f} s"
    )
    print(timing)
    header = f"# fuzz_diff --n {args.n} --seed {args.seed}\n\n{timing}"
    write_out(args.out, lines, samples, shrunk, header)
    for sample in shrunk:
        print(f"\n{describe(sample)}", end="")
    print(f"\nwrote {len(shrunk)} shrunk programs to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Time inplace-lint beside the linters people already run, on the same real code.

For one corpus (timm by default) this runs, several rounds each, and reports the median wall
time and the peak memory of every command:

* inplace-lint cold (``--no-cache``) and warm (the cache filled by a first run),
* TorchFix, both its own CLI and ``flake8 --select TOR``,
* Fixit (``fixit lint``, built-in rules),
* ruff (``ruff check --no-cache``, with its defaults and with ``--select ALL``),
* flake8 with its default plugins only (pyflakes, pycodestyle, mccabe).

With ``--all-four`` it also times inplace-lint cold on all four corpora in one run. Peers are
installed, pinned, into their own virtualenvs under ``bench/.venv-peers/`` (ignored by git): one
for TorchFix, Fixit, ruff and psutil, one for plain flake8 (so TorchFix's flake8 plugin is not
among flake8's "default plugins"). The harness itself runs under the first of these, for psutil.
Every tool is started on a copy of the corpus outside the repository (Fixit skips files that a
``.gitignore`` above them names, and ``bench/.corpora`` is ignored) with that folder as its only
path, and told to ignore configuration files, so all see the same ``.py`` files.

Peak memory is the largest sum of resident memory over the command's whole process tree, sampled
every 20 ms with psutil (pages shared between forked workers count once per process, so this
over-counts pools); the largest single process is shown beside it. (``getrusage`` of children
is not used: its maximum only grows over a run that starts many tools.)

Usage::

    .venv/bin/python bench/speed.py                       # timm, 3 rounds (1 for slow peers)
    .venv/bin/python bench/speed.py --rounds 5 --all-four
    .venv/bin/python bench/speed.py --only inplace-lint   # just our rows
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PEERS = BENCH / ".venv-peers"
TOOLS_VENV = PEERS / "tools"
FLAKE8_VENV = PEERS / "flake8"
#: What each peer virtualenv holds; changing a pin reinstalls it.
PINS = {
    TOOLS_VENV: ("torchfix==0.7.0", "fixit==2.2.1", "ruff==0.17.6", "psutil==7.2.2"),
    FLAKE8_VENV: ("flake8==7.5.0",),
}
#: Set in the re-executed harness: the interpreter that runs inplace-lint.
LINTER_ENV = "INPLACE_LINT_SPEED_PYTHON"
#: Commands slower than this many seconds on their first round get ``--slow-rounds`` rounds.
SLOW_SECONDS = 30.0
GIB = 1024**3

sys.path.insert(0, str(BENCH))
import corpora  # noqa: E402  (bench/corpora.py, beside this file)


@dataclass
class Measurement:
    """All rounds of one command on one corpus."""

    label: str
    corpus: str
    command: list[str]
    seconds: list[float] = field(default_factory=list)
    tree_peak: list[int] = field(default_factory=list)
    single_peak: list[int] = field(default_factory=list)
    load: list[float] = field(default_factory=list)
    returncodes: list[int] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def peak(self) -> int:
        return max(self.tree_peak, default=0)


def _bin(venv: Path, name: str) -> str:
    return str(venv / "bin" / name)


def ensure_peers() -> None:
    """Create the peer virtualenvs and install the pinned tools, unless already done."""
    for venv, pins in PINS.items():
        marker = venv / "pins.json"
        if marker.is_file() and json.loads(marker.read_text()) == list(pins):
            continue
        print(f"installing {', '.join(pins)} into {venv.relative_to(ROOT)} ...", flush=True)
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [
                _bin(venv, "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                *pins,
            ],
            check=True,
        )
        marker.write_text(json.dumps(list(pins)))


def _sample(pid: int, stop: threading.Event, peaks: list[int]) -> None:
    """Largest RSS sum over the process tree of ``pid``, and of one process, until ``stop``."""
    import psutil

    try:
        root = psutil.Process(pid)
    except psutil.Error:
        return
    while not stop.is_set():
        total = 0
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            break
        for proc in procs:
            try:
                rss = proc.memory_info().rss
            except psutil.Error:
                continue
            total += rss
            peaks[1] = max(peaks[1], rss)
        peaks[0] = max(peaks[0], total)
        stop.wait(0.02)


def snapshot(dest: Path, source: str) -> tuple[Path, str]:
    """Copy the package as committed at ``source`` into ``dest``; return the folder and commit.

    Timing the working tree would mix in half-made edits, and each edit of the analysis
    changes the cache fingerprint, so a "warm" run would really be cold.
    """
    commit = subprocess.run(
        ["git", "rev-parse", "--short", source], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", source, "inplace_lint"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    dest.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest, commit


def run_once(command: Sequence[str], cwd: Path, measurement: Measurement) -> None:
    """Run ``command`` once; record seconds, peaks, load and exit status."""
    load = os.getloadavg()[0]
    peaks = [0, 0]
    stop = threading.Event()
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    sampler = threading.Thread(target=_sample, args=(process.pid, stop, peaks), daemon=True)
    sampler.start()
    _, err = process.communicate()
    elapsed = time.perf_counter() - start
    stop.set()
    sampler.join()
    measurement.seconds.append(elapsed)
    measurement.tree_peak.append(peaks[0])
    measurement.single_peak.append(peaks[1])
    measurement.load.append((load + os.getloadavg()[0]) / 2)
    measurement.returncodes.append(process.returncode)
    if "Traceback" in err or process.returncode not in (0, 1):
        tail = " | ".join(err.strip().splitlines()[-3:])
        print(f"    ! {measurement.label}: exit {process.returncode}: {tail}", flush=True)


def commands(linter: str, folder: Path, cache_dir: Path, jobs: int | None) -> dict[str, list[str]]:
    """Every command to time on ``folder``; all start in the repository root."""
    path = str(folder)
    ipl = [linter, "-m", "inplace_lint", "check", "--isolated", "--exit-zero", path]
    if jobs is not None:
        ipl += ["--jobs", str(jobs)]
    tools = TOOLS_VENV
    return {
        "inplace-lint cold": [*ipl, "--no-cache"],
        "inplace-lint warm": [*ipl, "--cache-dir", str(cache_dir)],
        "TorchFix CLI": [_bin(tools, "torchfix"), path],
        "flake8 --select TOR": [_bin(tools, "flake8"), "--isolated", "--select", "TOR", path],
        "Fixit (fixit lint)": [_bin(tools, "fixit"), "lint", path],
        "ruff check --no-cache": [_bin(tools, "ruff"), "check", "--no-cache", "--isolated", path],
        "ruff --select ALL": [
            _bin(tools, "ruff"), "check", "--no-cache", "--isolated", "--select", "ALL", path
        ],
        "flake8 (default plugins)": [_bin(FLAKE8_VENV, "flake8"), "--isolated", path],
    }  # fmt: skip


def measure(
    label: str, command: list[str], corpus: str, rounds: int, slow_rounds: int, cwd: Path
) -> Measurement:
    measurement = Measurement(label, corpus, command)
    print(f"  {label} ...", end="", flush=True)
    wanted = rounds
    while len(measurement.seconds) < wanted:
        run_once(command, cwd, measurement)
        print(f" {measurement.seconds[-1]:.2f}s", end="", flush=True)
        if len(measurement.seconds) == 1 and measurement.seconds[0] > SLOW_SECONDS:
            wanted = max(1, min(rounds, slow_rounds))
    print(flush=True)
    return measurement


def _gib(value: int) -> str:
    return f"{value / GIB:.2f}" if value else "?"


def table(rows: Sequence[Measurement], cold: Measurement | None, warm: Measurement | None) -> str:
    """A markdown table: medians, rounds, peak memory, load, and our ratios to each row."""
    lines = [
        "| command | corpus | median s | rounds | min-max s | peak tree RSS GiB "
        "| peak 1 proc GiB | load | cold / this | warm / this |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        ratios = []
        for ours in (cold, warm):
            same = ours is not None and ours.corpus == row.corpus
            ratios.append(f"{ours.median / row.median:.2f}" if same and ours else "")
        lines.append(
            f"| `{row.label}` | {row.corpus} | {row.median:.2f} | {len(row.seconds)} "
            f"| {min(row.seconds):.2f}-{max(row.seconds):.2f} | {_gib(row.peak)} "
            f"| {_gib(max(row.single_peak, default=0))} "
            f"| {statistics.mean(row.load):.1f} | {ratios[0]} | {ratios[1]} |"
        )
    return "\n".join(lines)


def verdicts(rows: Sequence[Measurement], all_four: Measurement | None) -> list[str]:
    """The issue's targets, each met or missed, with the numbers."""
    by = {row.label: row for row in rows if row.corpus.startswith("timm")}
    out = []

    def line(name: str, ok: bool, detail: str) -> None:
        out.append(f"- {name}: {'met' if ok else 'MISSED'} ({detail})")

    cold, warm = by.get("inplace-lint cold"), by.get("inplace-lint warm")
    flake8, ruff_all = by.get("flake8 (default plugins)"), by.get("ruff --select ALL")
    if cold and flake8:
        line(
            "timm cold <= 1/2 flake8 default",
            cold.median <= flake8.median / 2,
            f"{cold.median:.2f} s vs {flake8.median:.2f} s, "
            f"ratio {cold.median / flake8.median:.2f}",
        )
    if warm and ruff_all:
        line(
            "timm warm within 2x ruff --select ALL",
            warm.median <= 2 * ruff_all.median,
            f"{warm.median:.2f} s vs {ruff_all.median:.2f} s, "
            f"ratio {warm.median / ruff_all.median:.2f}",
        )
    if all_four is not None:
        line("all four corpora cold < 60 s", all_four.median < 60, f"{all_four.median:.1f} s")
    ours = [r for r in rows if r.label.startswith("inplace-lint")]
    if all_four is not None:
        ours.append(all_four)
    if ours:
        peak = max(r.peak for r in ours)
        line("peak memory < 1 GiB", peak < GIB, f"{_gib(peak)} GiB, whole process tree")
    return out


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    names = [c.name for c in corpora.CORPORA]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=names, default="timm", help="corpus for the matrix")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per command (default 3)")
    parser.add_argument(
        "--slow-rounds", type=int, default=1, help=f"rounds for commands over {SLOW_SECONDS:.0f} s"
    )
    parser.add_argument("--all-four", action="store_true", help="also all four corpora, cold")
    parser.add_argument("--jobs", type=int, help="pass --jobs N to inplace-lint")
    parser.add_argument("--only", action="append", help="labels starting with this (repeatable)")
    parser.add_argument("--json", type=Path, help="also write every round here")
    parser.add_argument(
        "--source",
        default="HEAD",
        help="git revision of inplace_lint to time (default HEAD); 'worktree' for the files as is",
    )
    return parser.parse_args(argv)


def _reexec_with_psutil() -> None:
    """Run this script again under the peers' interpreter, which has psutil."""
    try:
        import psutil  # noqa: F401
    except ImportError:
        env = {**os.environ, LINTER_ENV: os.environ.get(LINTER_ENV, sys.executable)}
        python = _bin(TOOLS_VENV, "python")
        os.execve(python, [python, __file__, *sys.argv[1:]], env)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    ensure_peers()
    _reexec_with_psutil()
    linter = os.environ.get(LINTER_ENV, sys.executable)
    wanted = [c for c in corpora.CORPORA if args.all_four or c.name == args.corpus]
    folders = {c.name: corpora.DEFAULT_DEST / c.folder for c in wanted}
    for corpus in wanted:
        corpora.fetch(corpus, corpora.DEFAULT_DEST)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M')}  {platform.platform()}  {cores} cores  "
        f"python {platform.python_version()}  load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    rows: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="ipl-speed-") as tmp:
        # Outside the repository: Fixit (and ruff) skip files that a .gitignore above them names.
        folders = {
            name: Path(shutil.copytree(source, Path(tmp) / "corpora" / source.name))
            for name, source in folders.items()
        }
        folder = folders[args.corpus]
        cache_dir = Path(tmp) / "cache"
        if args.source == "worktree":
            cwd, commit = ROOT, "working tree"
        else:  # run from the snapshot's folder, so that its package shadows the checkout's
            cwd, commit = snapshot(Path(tmp) / "src", args.source)
        print(f"inplace-lint from {commit}", flush=True)
        plan = commands(linter, folder, cache_dir, args.jobs)
        plan = {k: v for k, v in plan.items() if not args.only or k.startswith(tuple(args.only))}
        print(f"{folder.name}: {sum(1 for _ in folder.rglob('*.py'))} files", flush=True)
        if "inplace-lint warm" in plan:
            print("  (filling the cache)", flush=True)
            subprocess.run(plan["inplace-lint warm"], cwd=cwd, capture_output=True, check=False)
        for label, command in plan.items():
            rows.append(measure(label, command, folder.name, args.rounds, args.slow_rounds, cwd))
        all_four = None
        if args.all_four:
            paths = [str(folders[c.name]) for c in wanted]
            command = [linter, "-m", "inplace_lint", "check", "--isolated", "--exit-zero"]
            command += [*paths, "--no-cache", *(["--jobs", str(args.jobs)] if args.jobs else [])]
            all_four = measure("inplace-lint cold", command, "all four", args.rounds, 1, cwd)
            rows.append(all_four)
    by_label = {r.label: r for r in rows if r.corpus == folder.name}
    print()
    print(table(rows, by_label.get("inplace-lint cold"), by_label.get("inplace-lint warm")))
    print()
    print("\n".join(verdicts(rows, all_four)))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

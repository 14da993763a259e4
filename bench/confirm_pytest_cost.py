"""What ``pytest --inplace-confirm`` costs on a real test suite, and whether outcomes change.

    python bench/confirm_pytest_cost.py [TESTS...] [--rounds 2] [-- PYTEST_ARGS...]

Runs ``python -m pytest -q -p no:cacheprovider [-n 0] TESTS`` (default: this project's
``tests/test_examples_torch.py``, which runs every example with torch, forward and backward)
alternately without and with ``--inplace-confirm``, ``--rounds`` times each, in fresh
processes (torch on ``--threads`` threads, 1 by default), and prints the median wall-clock
and CPU time (user + system) of each, the overhead, the pytest summary line of each (they
must match: the option does not change outcomes) and the hazards the option listed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: torch's intra-op threads (``--threads``): idle threads of a busy machine spin and bill CPU.
THREADS = "1"
SUMMARY = re.compile(r"^=*\s*(\d+ (passed|failed|xfailed|skipped|error).*?)\s*=*$")


def run(tests: list[str], extra: list[str], confirm: bool) -> tuple[float, float, str, str]:
    """Wall and CPU seconds, the summary line, and the full output of one pytest process."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if importlib.util.find_spec("xdist") is not None:
        command += ["-n", "0"]  # one process, so that CPU time is the suite's own
    command += extra + tests + (["--inplace-confirm"] if confirm else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = dict(os.environ, OMP_NUM_THREADS=THREADS)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = done.stdout.splitlines()
    summary = next((m.group(1) for x in reversed(lines) if (m := SUMMARY.match(x))), "?")
    summary = re.sub(r" in [\d.]+s.*$", "", summary)
    return wall, cpu, summary, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests", nargs="*", default=["tests/test_examples_torch.py"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", default="1", help="OMP_NUM_THREADS of each run (1)")
    argv = sys.argv[1:]
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1 :]
    ns = parser.parse_args(argv)
    global THREADS
    THREADS = ns.threads
    samples: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    summaries: dict[bool, set[str]] = {False: set(), True: set()}
    listed = ""
    for _ in range(ns.rounds):
        for confirm in (False, True):
            wall, cpu, summary, out = run(ns.tests, extra, confirm)
            samples[confirm].append((wall, cpu))
            summaries[confirm].add(summary)
            if confirm:
                listed = "\n".join(x for x in out.splitlines() if "inplace-lint" in x or "] " in x)
    plain_wall = statistics.median(w for w, _ in samples[False])
    plain_cpu = statistics.median(c for _, c in samples[False])
    wall = statistics.median(w for w, _ in samples[True])
    cpu = statistics.median(c for _, c in samples[True])
    print(f"suite: {' '.join(ns.tests)} {' '.join(extra)} ({ns.rounds} rounds each)")
    print(
        f"plain              wall {plain_wall:6.1f} s  cpu {plain_cpu:6.1f} s  {summaries[False]}"
    )
    print(f"--inplace-confirm  wall {wall:6.1f} s  cpu {cpu:6.1f} s  {summaries[True]}")
    same = "unchanged" if summaries[False] == summaries[True] else "CHANGED"
    print(
        f"overhead: wall {(wall / plain_wall - 1) * 100:+.0f}%,"
        f" cpu {(cpu / plain_cpu - 1) * 100:+.0f}%; outcomes {same}"
    )
    print(listed)
    return 0


if __name__ == "__main__":
    sys.exit(main())

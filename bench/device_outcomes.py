"""Run labelled case files plainly on two torch devices and list where torch's verdict differs.

    python bench/device_outcomes.py FOLDER... [--devices cpu,cuda] [--jobs 14] [--timeout 30]
                                    [--budget SECONDS] [--out outcomes.json]

Each case runs as a script in a child forked from a parent that has imported torch but not
initialised CUDA, with ``torch.set_default_device(device)`` set first, so a case that builds its
tensors without naming a device runs on that device. The outcome of one run is ``raises`` with
the first line of the exception, ``clean``, or ``timeout``. The report lists, per device pair,
the files whose outcome kind differs (a hazard that raises on one device only is what the op
table's device overlay must learn), and a count of each kind. It is a probe of torch, not of
the linter: nothing of inplace-lint runs here.

Limits: a case that pins its own device (``device="cpu"``) runs there on both sides, and one
that fails for a device mismatch is reported as raising with that message. Results arrive as
children finish; when ``--budget`` runs out the files not yet run are listed as skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import time
from multiprocessing import connection
from pathlib import Path


def run_case(path: Path, device: str, deterministic: bool = False) -> str:
    """Run one case as a script on ``device`` here (torch's default device set to it; with
    ``deterministic``, ``use_deterministic_algorithms(True, warn_only=True)`` as ``confirm``'s
    compared runs have): ``clean`` or ``raises Type: first line``."""
    import torch

    try:
        torch.set_default_device(device)
        if deterministic:
            torch.use_deterministic_algorithms(True, warn_only=True)
        os.chdir(path.parent)
        sys.argv = [str(path)]
        runpy.run_path(str(path), run_name="__main__")
        if device == "cuda":
            torch.cuda.synchronize()
    except BaseException as exc:  # every failure is an outcome here
        first = (str(exc).strip().splitlines() or [""])[0][:160]
        return f"raises {type(exc).__name__}: {first}"
    return "clean"


def _child(path: Path, device: str, write_end: int) -> None:
    """Run one case in this forked child and send its outcome; never returns."""
    os.write(write_end, run_case(path, device).encode() + b"\n")
    os._exit(0)


def _start(path: Path, device: str) -> tuple[int, int]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        _child(path, device, write_end)
    os.close(write_end)
    return pid, read_end


def _run_all(
    jobs: list[tuple[Path, str]], width: int, timeout: float, budget: float
) -> dict[tuple[str, str], str]:
    """Run ``(path, device)`` jobs ``width`` at a time; outcomes keyed by (path, device)."""
    results: dict[tuple[str, str], str] = {}
    pending = list(jobs)
    running: dict[int, tuple[int, tuple[str, str], float]] = {}
    start = time.monotonic()
    while pending or running:
        while pending and len(running) < width and time.monotonic() - start < budget:
            path, device = pending.pop(0)
            pid, fd = _start(path, device)
            running[fd] = (pid, (str(path), device), time.monotonic())
        if not running:
            break
        ready = connection.wait(list(running), timeout=1.0)
        for fd in ready:
            pid, key, _ = running.pop(fd)
            data = os.read(fd, 4096).decode(errors="replace").strip()
            os.close(fd)
            os.waitpid(pid, 0)
            results[key] = data or "raises crashed: the child died without an outcome"
        now = time.monotonic()
        for fd, (pid, key, began) in list(running.items()):
            if now - began > timeout:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                os.close(fd)
                running.pop(fd)
                results[key] = "timeout"
    for path, device in pending:
        results[(str(path), device)] = "skipped"
    return results


def _kind(outcome: str) -> str:
    return outcome.split(" ", 1)[0]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--devices", default="cpu,cuda")
    parser.add_argument("--jobs", type=int, default=14)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--budget", type=float, default=600.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    import torch  # noqa: F401 - imported once before the forks, CUDA left uninitialised

    devices = args.devices.split(",")
    files = [f for folder in args.folders for f in sorted(folder.rglob("*.py"))]
    jobs = [(f.resolve(), d) for f in files for d in devices]
    results = _run_all(jobs, args.jobs, args.timeout, args.budget)
    table = {
        str(f.resolve()): {d: results.get((str(f.resolve()), d), "skipped") for d in devices}
        for f in files
    }
    differ = {
        f: r
        for f, r in table.items()
        if len({_kind(o) for o in r.values()}) > 1 and "skipped" not in r.values()
    }
    counts = {d: {} for d in devices}
    for row in table.values():
        for d, outcome in row.items():
            counts[d][_kind(outcome)] = counts[d].get(_kind(outcome), 0) + 1
    print(f"{len(files)} files on {', '.join(devices)}: {json.dumps(counts)}")
    print(f"outcome differs on {len(differ)} files:")
    for path, row in differ.items():
        print(f"  {os.path.relpath(path)}")
        for d, outcome in row.items():
            print(f"      {d}: {outcome}")
    if args.out:
        args.out.write_text(
            json.dumps({"counts": counts, "differ": differ, "all": table}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

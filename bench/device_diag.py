"""Why does ``confirm`` see a case differently on two devices? Run one case file four ways.

    python bench/device_diag.py CASE.py [--devices cpu,cuda]

On each device (torch's default device set to it, as ``confirm --device`` does), the case runs
as a script in a fresh process: plainly; with ``torch.use_deterministic_algorithms(True,
warn_only=True)`` (what ``confirm`` switches on for its runs); under pass A's detector alone
with that setting (its hits and what it saved and saw written, by op); and through
``inplace-lint confirm --device``. Each line of output names the device and the way; the
first disagreement between devices is the step to look at. A diagnostic for GPU sessions,
printing what it finds; it changes nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import collections, os, runpy, sys
from pathlib import Path
import torch
device, way, path = sys.argv[1:4]
if way != "passa":  # the case as a script, as bench/device_outcomes.py runs it
    sys.path.insert(0, sys.argv[4])
    from device_outcomes import run_case
    print(f"{device:5} {way:6} {run_case(Path(path), device, way == 'determ')}")
    sys.exit(0)
torch.set_default_device(device)
torch.use_deterministic_algorithms(True, warn_only=True)
sys.argv = [path]
os.chdir(os.path.dirname(path) or ".")
outcome = "clean"
from inplace_lint.dynamic.passa import Detector
detector = Detector()
try:
    with detector:
        runpy.run_path(path, run_name="__main__")
except BaseException as exc:
    outcome = f"raises {type(exc).__name__}: {str(exc).splitlines()[0][:150]}"
saved = collections.Counter()
written = collections.Counter()
for refs in detector.by_storage.values():
    for ref in refs:
        item = ref()
        if item is not None:
            saved[item.site.short() if item.site else "?"] += 1
            for write in item.writes:
                written[f"{write.op}@{write.site.short() if write.site else '?'}"] += 1
print(f"{device:5} passa  {outcome}")
hits = [(h.kind, h.write.op, h.evidence()[:120]) for h in detector.hits]
print(f"{device:5} passa  hits: {hits}")
print(f"{device:5} passa  live saved by site: {dict(saved.most_common(6))}")
print(f"{device:5} passa  writes seen on saved storage: {dict(written.most_common(6))}")
"""


def _run(args: list[str], timeout: float = 120) -> str:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    try:
        done = subprocess.run(
            args, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return "timeout"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    tail = [line for line in done.stderr.splitlines() if line.strip()][-2:]
    return "\n".join(lines or tail)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", type=Path)
    parser.add_argument("--devices", default="cpu,cuda")
    options = parser.parse_args(argv)
    path = str(options.case.resolve())
    for device in options.devices.split(","):
        for way in ("plain", "determ", "passa"):
            child = [sys.executable, "-c", _CHILD, device, way, path, str(ROOT / "bench")]
            print(_run(child), flush=True)
        confirm = [sys.executable, "-m", "inplace_lint", "confirm", "--device", device, path]
        for line in _run(confirm, timeout=180).splitlines():
            print(f"{device:5} confirm {line[:220]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Running probe units in subprocess batches, so that a crashing probe loses only itself.

The parent splits the units into batches and runs each batch in a fresh worker process
(``gen_torch_ops.py --worker FILE``), several at a time. A worker reports each unit's result
on its own line as soon as the unit is done (on CUDA after a ``torch.cuda.synchronize()``, so
an asynchronous device error is charged to the unit that caused it). When a worker dies
(segfault, abort, CUDA error) or a unit runs past the timeout, the results it already
reported are kept, the unit in flight is retried alone in a new process, and the rest of the
batch goes on in another new process. A unit that fails alone too is recorded as skipped
with the reason; it is never fatal. A worker that dies before it is ready (torch or the
device cannot start) is fatal, since every unit would fail the same way.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

MARK = "@@opprobe "
DEADLINE = "not run (deadline)"
Log = Callable[[str], None]


class WorkerStartError(RuntimeError):
    """A worker died before it could probe anything."""


@dataclass(frozen=True)
class Settings:
    """How to start workers and how long to wait for them."""

    command: list[str]  # the worker command; the units file is appended
    jobs: int = 4
    batch_size: int = 100
    probe_timeout: float = 120.0  # seconds one unit may take
    startup_timeout: float = 180.0  # seconds a worker may take to import torch and start
    deadline: float | None = None  # time.monotonic() after which no probe runs


@dataclass
class WorkerRun:
    """What one worker process reported before it finished or died."""

    results: dict[str, Any] = field(default_factory=dict)
    failed: str | None = None  # the unit charged with the failure
    reason: str = ""  # short, for the table
    stderr: str = ""  # the end of the worker's stderr, for the log


def _describe_exit(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


def _tail(stream: IO[bytes], lines: int = 3) -> str:
    stream.seek(0)
    text = stream.read().decode("utf-8", "replace").strip().splitlines()
    return " | ".join(line.strip() for line in text[-lines:])


def _read_lines(pipe: IO[str], sink: queue.Queue[str | None]) -> None:
    for line in pipe:
        if line.startswith(MARK):
            sink.put(line[len(MARK) :])
    sink.put(None)


def _past_deadline(settings: Settings) -> bool:
    return settings.deadline is not None and time.monotonic() >= settings.deadline


def _messages(proc: subprocess.Popen[str], settings: Settings) -> Iterator[dict[str, Any] | str]:
    """The worker's messages; a string (the reason) when it stops answering in time.

    A worker still busy at the deadline is killed, and the reason is ``DEADLINE``.
    """
    assert proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True).start()
    timeout = settings.startup_timeout
    while True:
        wait = timeout
        if settings.deadline is not None:
            wait = max(0.0, min(wait, settings.deadline - time.monotonic()))
        try:
            line = lines.get(timeout=wait)
        except queue.Empty:
            proc.kill()
            yield DEADLINE if _past_deadline(settings) else f"timeout after {timeout:g} s"
            return
        if line is None:
            return
        timeout = settings.probe_timeout
        yield json.loads(line)


def run_worker(units: list[str], settings: Settings) -> WorkerRun:
    """Run ``units`` in one fresh worker and collect what it reported."""
    run = WorkerRun()
    ready = False
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryFile() as stderr:
        units_file = Path(folder) / "units.txt"
        units_file.write_text("\n".join(units) + "\n")
        command = [*settings.command, str(units_file)]
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, text=True
        ) as proc:
            for message in _messages(proc, settings):
                if isinstance(message, str):
                    run.reason = message
                elif "ready" in message:
                    ready = True
                elif "error" in message:
                    run.failed, run.reason = message["unit"], message["error"]
                else:
                    run.results[message["unit"]] = message["result"]
            code = proc.wait()
        if not ready and run.reason != DEADLINE:
            why = run.reason or _describe_exit(code)
            raise WorkerStartError(f"worker did not start ({why}): {_tail(stderr, 12)}")
        missing = [unit for unit in units if unit not in run.results]
        if missing and run.failed is None:
            run.failed = missing[0]
            run.reason = run.reason or _describe_exit(code)
        if run.failed is not None:
            run.stderr = _tail(stderr, 8)
    return run


def _start_worker(units: list[str], settings: Settings, log: Log) -> WorkerRun:
    """``run_worker``, tried a second time if the worker could not start."""
    try:
        return run_worker(units, settings)
    except WorkerStartError as error:
        log(f"  {error}; trying once more")
        time.sleep(2)
        return run_worker(units, settings)


def run_batch(units: list[str], settings: Settings, log: Log) -> tuple[dict[str, Any], dict]:
    """Results of one batch, and the units skipped with their reasons."""
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    pending = list(units)
    while pending:
        if _past_deadline(settings):
            skipped.update(dict.fromkeys(pending, DEADLINE))
            break
        run = _start_worker(pending, settings, log)
        results.update(run.results)
        if run.failed is None:
            break
        culprit = run.failed
        if run.reason != DEADLINE:
            log(f"  {culprit}: {run.reason} [stderr: {run.stderr}]")
        if len(pending) > 1 and run.reason != DEADLINE:
            run = _start_worker([culprit], settings, log)
            results.update(run.results)
        if run.failed is not None:
            skipped[culprit] = run.reason
            log(f"  {culprit}: skipped ({run.reason})")
        else:
            log(f"  {culprit}: ran alone")
        rest = pending[pending.index(culprit) + 1 :]
        pending = [unit for unit in rest if unit not in results]
    return results, skipped


def run_isolated(
    units: list[str], settings: Settings, log: Log
) -> tuple[dict[str, Any], dict[str, str]]:
    """Run every unit in worker subprocesses, ``settings.jobs`` batches at a time."""
    size = max(1, settings.batch_size)
    batches = [units[start : start + size] for start in range(0, len(units), size)]
    log(f"{len(units)} probes in {len(batches)} batches of {size}, {settings.jobs} at a time")
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    started = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=max(1, settings.jobs))
    try:
        futures = [pool.submit(run_batch, batch, settings, log) for batch in batches]
        for done, future in enumerate(as_completed(futures), 1):
            batch_results, batch_skipped = future.result()
            results.update(batch_results)
            skipped.update(batch_skipped)
            elapsed = time.monotonic() - started
            log(f"batch {done}/{len(batches)} done ({elapsed:.0f} s, {len(skipped)} skipped)")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return results, dict(sorted(skipped.items()))


def _test_faults() -> dict[str, str]:
    """``OPPROBE_TEST_FAULTS="crash:UNIT,hang:UNIT"``: faults a test injects into workers."""
    spec = os.environ.get("OPPROBE_TEST_FAULTS", "")
    pairs = (item.split(":", 1) for item in spec.split(",") if ":" in item)
    return {unit: fault for fault, unit in pairs}


def _inject(fault: str | None) -> None:
    if fault == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif fault == "hang":
        time.sleep(3600)


def worker_main(units_file: Path, device: str, threads: int) -> int:
    """Probe the units listed in ``units_file``, reporting each on the original stdout."""
    faulthandler.enable()  # a crash prints the Python stack of the probe to stderr
    with contextlib.suppress(Exception):  # Linux: die with the parent (PR_SET_PDEATHSIG)
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything else printed to stdout goes to stderr, away from the protocol

    def emit(message: dict[str, Any]) -> None:
        out.write(MARK + json.dumps(message) + "\n")
        out.flush()

    import torch

    from . import specs, units

    if threads > 0:
        torch.set_num_threads(threads)
    specs.set_device(device)
    on_cuda = specs.DEVICE.type == "cuda"
    if on_cuda:
        torch.zeros(1, device=specs.DEVICE)
        torch.cuda.synchronize()
    torch.manual_seed(0)
    emit({"ready": True})
    faults = _test_faults()
    for unit in units_file.read_text().split():
        _inject(faults.get(unit))
        result = units.run_unit(unit)
        if on_cuda:
            try:
                torch.cuda.synchronize()
            except Exception as error:  # a sticky device error: this process is spent
                emit({"unit": unit, "error": f"device error: {error}".splitlines()[0]})
                os._exit(3)
        emit({"unit": unit, "result": result})
    out.flush()
    os._exit(0)  # skip interpreter and CUDA teardown, which can crash after a bad probe

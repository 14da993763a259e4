"""Coverage leaves out what a garbage collection runs inside the traced window: other
libraries' ``gc.callbacks`` (hypothesis times every collection) and finalizers are not the
run's lines, and a file reached only through them must not be linted as reached."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

from inplace_lint.dynamic.coverage import Coverage

CALLBACK = """\
def timer(phase, info):
    seen = phase
    return seen
"""
WORK = """\
def work():
    a = [1]
    a.append(a)
    return len(a)
"""


def _load(path: Path, source: str, name: str) -> Callable[..., object]:
    path.write_text(source, encoding="utf-8")
    namespace: dict[str, object] = {}
    exec(compile(source, str(path), "exec"), namespace)
    return namespace[name]  # type: ignore[return-value]


def test_a_gc_callback_running_in_the_window_is_not_reached(tmp_path: Path) -> None:
    timer = _load(tmp_path / "junk_timer.py", CALLBACK, "timer")
    work = _load(tmp_path / "user_work.py", WORK, "work")
    gc.callbacks.append(timer)
    try:
        coverage = Coverage()
        with coverage.active():
            work()
            gc.collect()  # a collection inside the run calls ``timer`` twice
            work()
    finally:
        gc.callbacks.remove(timer)
    files = {Path(path).name for path, _ in coverage.lines()}
    assert files == {"user_work.py"}
    assert not coverage.collecting
    assert coverage._gc_start not in gc.callbacks and coverage._gc_stop not in gc.callbacks

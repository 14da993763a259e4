"""Coverage of threads that join a run: autograd's device thread on CUDA runs a custom
Function's ``backward`` (user code) outside the thread ``sys.settrace`` was set in. The whole
path is checked on a GPU machine by ``bench/gpu_confirm.sh``; here, the mechanism on CPU."""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from inplace_lint.dynamic.coverage import Coverage, follow_this_thread

WORK = """\
def work():
    a = 1
    b = a + 1
    return b
"""


def _load(tmp_path: Path) -> Callable[[], int]:
    path = tmp_path / "user_work.py"
    path.write_text(WORK, encoding="utf-8")
    namespace: dict[str, object] = {}
    exec(compile(WORK, str(path), "exec"), namespace)
    return namespace["work"]  # type: ignore[return-value]


def _lines(coverage: Coverage, tmp_path: Path) -> set[int]:
    own = str(tmp_path / "user_work.py")
    return {line for path, line in coverage.lines() if path == own}


def test_a_thread_that_joins_the_run_is_traced_and_let_go_after(tmp_path: Path) -> None:
    work = _load(tmp_path)
    jobs: queue.Queue[Callable[[], object] | None] = queue.Queue()
    answers: queue.Queue[object] = queue.Queue()

    def worker() -> None:  # a long-lived thread, like autograd's device threads
        while (job := jobs.get()) is not None:
            answers.put(job())

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    unjoined = Coverage()
    with unjoined.active():
        jobs.put(work)
        assert answers.get(timeout=30) == 2
    assert _lines(unjoined, tmp_path) == set()  # a thread nobody followed is not traced

    coverage = Coverage()
    with coverage.active():
        jobs.put(lambda: (follow_this_thread(), work())[1])
        assert answers.get(timeout=30) == 2
        jobs.put(sys.gettrace)
        assert answers.get(timeout=30) is not None  # traced while the run lasts
    assert _lines(coverage, tmp_path) == {1, 2, 3, 4}

    jobs.put(lambda: (work(), sys.gettrace())[1])  # the first event after the run lets go
    assert answers.get(timeout=30) is None
    jobs.put(None)
    thread.join(timeout=30)


def test_following_the_runs_own_thread_changes_nothing(tmp_path: Path) -> None:
    work = _load(tmp_path)
    coverage = Coverage()
    with coverage.active():
        tracer = sys.gettrace()
        follow_this_thread()
        assert sys.gettrace() is tracer
        work()
    before = sys.gettrace()
    follow_this_thread()  # no run: nothing to join
    assert sys.gettrace() is before
    assert _lines(coverage, tmp_path) == {1, 2, 3, 4}

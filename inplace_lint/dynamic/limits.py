"""A wall-clock limit for one ``confirm`` target (``--timeout SECONDS``).

``SIGALRM`` through ``setitimer(ITIMER_REAL)``: the engine's own per-file budget uses the CPU
timer (``ITIMER_VIRTUAL``), so the two never meet. The handler raises ``TargetTimeout``, a
``BaseException``, so that neither the user's ``except Exception`` nor the runner's handling
of a failing run mistakes it for the target's own error; every context manager on the way
out (pass A's hooks, swapped code, the default device) still restores what it changed.

Limits: a timer can be armed only in the main thread of a platform with ``setitimer``
(elsewhere ``deadline`` runs the block without one and says so through ``armed``); Python
handles the signal between bytecodes, so one long native op (a huge matmul) finishes first.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Deadline", "TargetTimeout", "deadline"]

_SIGNAL = getattr(signal, "SIGALRM", None)
_TIMER = getattr(signal, "ITIMER_REAL", None)


class TargetTimeout(BaseException):
    """The target ran past its ``--timeout``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"timed out after {seconds:g} s")
        self.seconds = seconds


class Deadline:
    """What ``deadline`` yields: whether a timer was armed."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.armed = False


def _can_arm() -> bool:
    return (
        _SIGNAL is not None
        and _TIMER is not None
        and threading.current_thread() is threading.main_thread()
    )


@contextmanager
def deadline(seconds: float | None) -> Iterator[Deadline]:
    """Raise ``TargetTimeout`` in the block once ``seconds`` of wall-clock time have passed."""
    state = Deadline(seconds)
    if not seconds or seconds <= 0 or not _can_arm():
        yield state
        return
    assert _SIGNAL is not None and _TIMER is not None

    def expired(signum: int, frame: FrameType | None) -> None:
        if state.armed:
            state.armed = False
            raise TargetTimeout(seconds)

    previous = signal.signal(_SIGNAL, expired)
    state.armed = True
    signal.setitimer(_TIMER, seconds)
    try:
        yield state
    finally:
        state.armed = False
        signal.setitimer(_TIMER, 0)
        signal.signal(_SIGNAL, previous)

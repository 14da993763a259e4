"""A per-file time budget: a CPU-time timer in the main thread of whichever process lints.

The budget counts the process's own CPU time (``ITIMER_VIRTUAL``, signalled by ``SIGVTALRM``),
not wall time, so a machine busy with other work does not push a normal file over it.

The engine starts a :class:`Budget` around the analysis of one file; when the time runs out the
signal handler raises :class:`OverBudget` in that thread and the engine reports the file as
IPL999. Where no timer can be set (another thread, a platform without ``setitimer``, or a
``SIGVTALRM`` handler or timer that belongs to someone else, such as a test timeout plugin) the
budget does nothing: the file is analysed without a limit rather than not at all.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType

_SIGNAL = getattr(signal, "SIGVTALRM", None)
_TIMER = getattr(signal, "ITIMER_VIRTUAL", None)

#: CPU seconds one file may take to analyse; ``INPLACE_LINT_TIME_BUDGET`` overrides, 0 disables.
DEFAULT_SECONDS = 30.0


class OverBudget(BaseException):
    """Raised in the linting thread when a file's time budget runs out.

    A ``BaseException`` so that no ``except Exception`` inside the analysis swallows it.
    """


def budget_seconds() -> float:
    """The configured budget: the environment variable if it is a number, else the default."""
    raw = os.environ.get("INPLACE_LINT_TIME_BUDGET", "")
    try:
        value = float(raw) if raw.strip() else DEFAULT_SECONDS
    except ValueError:
        return DEFAULT_SECONDS
    return value if value == value and value >= 0 else DEFAULT_SECONDS  # NaN, negatives


class Budget:
    """One armed (or inert) timer; :meth:`stop` always restores what was there before."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = budget_seconds() if seconds is None else seconds
        self.active = False  # the handler is installed and the timer may fire
        self.expired = False
        self._previous: object = None

    def start(self) -> Budget:
        if self.seconds <= 0 or not _can_arm():
            return self
        try:
            self._previous = signal.signal(_SIGNAL, self._expired)
            self.active = True
            signal.setitimer(_TIMER, self.seconds)
        except (ValueError, OSError):  # not the main thread after all, or no such timer
            self.stop()
        return self

    def stop(self) -> None:
        if not self.active:
            return
        self.active = False
        try:
            signal.setitimer(_TIMER, 0)
            signal.signal(_SIGNAL, self._previous)  # type: ignore[arg-type]
        except (ValueError, OSError, TypeError):
            pass

    def _expired(self, signum: int, frame: FrameType | None) -> None:
        if self.active and not self.expired:
            self.expired = True
            raise OverBudget(f"took more than {self.seconds:g} s of CPU time to analyse")


def _can_arm() -> bool:
    if not hasattr(signal, "setitimer") or not hasattr(signal, "SIGVTALRM"):
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    try:
        if signal.getitimer(_TIMER)[0] > 0:
            return False  # someone else's timer is running
        return signal.getsignal(_SIGNAL) in (signal.SIG_DFL, signal.SIG_IGN, None)
    except (ValueError, OSError):
        return False

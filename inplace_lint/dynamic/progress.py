"""A progress line for slow ``confirm`` targets, on a terminal's standard error only.

``Progress.phase(text)`` names what runs now (pass A, linting, twin 3/12); a daemon thread
redraws ``inplace-lint confirm: TARGET: phase (12 s)`` twice a second once the target has run
for ``DELAY`` seconds, and ``close`` erases the line before the target's results print. Off in
a pipe or a file, under ``CI``, with ``TERM=dumb`` or ``--quiet`` (``terminal.progress_wanted``).
The target's own output to the terminal may interleave with the line; the next redraw
starts from the left margin again.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """One target's progress line; inert when ``enabled`` is false."""

    DELAY = 1.0
    INTERVAL = 0.5

    def __init__(self, label: str, enabled: bool, stream: TextIO | None = None) -> None:
        self.label = label
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.text = "starting"
        self.started = time.monotonic()
        self.drawn = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        if enabled:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()

    def phase(self, text: str) -> None:
        """What the target is doing now."""
        self.text = text

    def _loop(self) -> None:
        if self._stop.wait(self.DELAY):
            return
        while not self._stop.is_set():
            self._draw()
            self._stop.wait(self.INTERVAL)

    def _draw(self) -> None:
        seconds = time.monotonic() - self.started
        line = f"inplace-lint confirm: {self.label}: {self.text} ({seconds:.0f} s)"
        with self._lock:
            if self._stop.is_set():
                return
            self.drawn = self._write(f"\r\x1b[K{line}")

    def close(self) -> None:
        """Stop redrawing and erase the line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self.drawn:
                self._write("\r\x1b[K")
                self.drawn = False

    def _write(self, text: str) -> bool:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal must not stop the run
            self._stop.set()
            return False
        return True

"""Where the command's output goes and how it looks: the report's destination, colour, progress.

The report goes to standard output, or with ``--output-file`` to a file that is replaced in one
step when the run ends (a reader never sees half a report). Colour follows ``--color`` and,
under ``auto``, the environment as ruff reads it. Progress is a single line rewritten in place on
standard error, and only where someone is watching: a terminal, not a pipe, a file or CI.
"""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from inplace_lint.atomic import replace_file

COLOR_CHOICES = ("auto", "always", "never")


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # replaced or closed streams
        return False


def _env(name: str) -> bool:
    """True when the variable is set to a non-empty value (the NO_COLOR/FORCE_COLOR convention)."""
    return bool(os.environ.get(name))


def use_color(choice: str, stream: TextIO, to_file: bool = False) -> bool:
    """Whether text output is coloured.

    ``always`` and ``never`` decide alone; ``auto`` colours when ``FORCE_COLOR`` is set, else not
    when ``NO_COLOR`` is set, else only on a terminal (ruff's order). A report written to
    ``--output-file`` is never coloured, as with ruff.
    """
    if to_file or choice == "never":
        return False
    if choice == "always" or _env("FORCE_COLOR"):
        return True
    if _env("NO_COLOR"):
        return False
    return _isatty(stream)


class ReportSink:
    """Standard output, or a buffer written atomically to ``path`` by :meth:`close`."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.stream: TextIO = io.StringIO() if path is not None else sys.stdout

    def check_writable(self) -> str | None:
        """Why ``path`` cannot be written, in a few words, or None; asked before the run."""
        if self.path is None:
            return None
        if self.path.is_dir():
            return f"cannot write --output-file {self.path}: it is a directory"
        parent = self.path.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)  # as ruff does
        except OSError as exc:
            return f"cannot write --output-file {self.path}: {exc.strerror or exc}"
        if not os.access(parent, os.W_OK | os.X_OK):
            return f"cannot write --output-file {self.path}: permission denied"
        return None

    def close(self) -> None:
        """Flush standard output, or replace ``path`` with the report (raises OSError)."""
        if self.path is None:
            self.stream.flush()
            return
        assert isinstance(self.stream, io.StringIO)
        write_atomically(self.path, self.stream.getvalue().encode("utf-8"))


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``.

    An existing file keeps its permission bits; a new one gets the usual ``0o666 & ~umask``.
    """
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    replace_file(path, data, mode, suffix=".tmp")


class Progress:
    """``inplace-lint: 120/2285 files`` on standard error, rewritten in place, then erased.

    Shown only when enabled (see :func:`progress_wanted`) and the run is long: more than
    ``MANY`` files to lint, or still running after ``DELAY`` seconds. Redrawn at most every
    ``INTERVAL`` seconds.
    """

    DELAY = 1.0
    MANY = 200
    INTERVAL = 0.1

    def __init__(self, total: int, enabled: bool, stream: TextIO | None = None) -> None:
        self.total = total
        self.enabled = enabled and total > 0
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.started = time.monotonic()
        self.drawn_at: float | None = None

    def advance(self) -> None:
        """One more file linted (or found in the cache)."""
        self.done += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if self.drawn_at is None and self.total <= self.MANY and now - self.started < self.DELAY:
            return
        if self.drawn_at is not None and now - self.drawn_at < self.INTERVAL:
            return
        self.drawn_at = now
        self._write(f"\rinplace-lint: {self.done}/{self.total} files")

    def close(self) -> None:
        """Erase the line, so that what follows starts at the left margin."""
        if self.drawn_at is not None:
            self._write("\r\x1b[K")
            self.drawn_at = None

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal must not stop the run
            self.enabled = False


def progress_wanted(quiet: bool, stream: TextIO | None = None) -> bool:
    """A progress line helps a person at a terminal; never with --quiet, in CI, or in a pipe."""
    stream = stream if stream is not None else sys.stderr
    if quiet or _env("CI") or os.environ.get("TERM") == "dumb":
        return False
    return _isatty(stream)

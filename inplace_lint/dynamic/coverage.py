"""Which user lines a run executed, leaving out the lines that ran only to import a module.

A ``sys.settrace`` hook. Lines of torch, the standard library and inplace-lint are ignored
(``sites.is_user_file``). While an import runs (importlib's ``_find_and_load`` with the
finders and loaders it calls, or the body of a module other than the subject's own file: an
``import``, a lazy import inside a forward), nothing is recorded and no line events are asked
for: neither the module's top-level statements nor the functions they call (decorators,
registries, default configs). So a library that was only imported holds no reached line, is
not linted, and reports no "not reached" findings; and an import under the hook costs one
call event per frame instead of one event per line.

Other threads: ``sys.settrace`` is per thread, and on CUDA autograd runs backward (a custom
Function's ``backward`` included) in its own device thread. Pass A's dispatch mode, which
autograd carries into that thread, calls ``follow_this_thread`` at each op: a thread not
traced yet is traced from then on, its running user frames from their current line. The
thread's hook removes itself at its first event after the run.

Garbage collection: while a collection runs (between its "start" and "stop" callbacks),
nothing is recorded. Other libraries' ``gc.callbacks`` (hypothesis times every collection)
and finalizers run inside the traced window wherever the collector happens to start, and are
not the run's own lines.

Limits: a frame already running when the hook is installed is traced from the line it is on;
a thread that never dispatches a torch op under pass A is not traced; a user ``__del__`` run
by the collector is not recorded.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from inplace_lint.dynamic import sites

__all__ = ["Coverage", "follow_this_thread"]

MODULE_BODY = "<module>"
#: Where every import that is not already in ``sys.modules`` goes through: the finders and
#: loaders it calls (pytest's assertion rewriter, a package's ``__getattr__`` shims) are
#: import work too.
IMPORTLIB = ("<frozen importlib._bootstrap>", "_find_and_load")


class Coverage:
    """Which user lines ran in the run itself (import-time lines left out).

    ``own`` is the subject's file: its module body is the run (a script, or the module that
    defines a target function), not an import.
    """

    def __init__(self, own: str | None = None) -> None:
        self.raw: set[tuple[str, int]] = set()
        self.own = os.path.abspath(own) if own else None
        self.importing = 0
        self._imports: dict[str, bool] = {}
        #: the thread ``active`` traces; others join through ``follow_this_thread``
        self.thread: int | None = None
        #: inside a garbage collection (its callbacks and finalizers are not the run)
        self.collecting = False

    def _is_import(self, filename: str) -> bool:
        """Whether a module body from ``filename`` runs as an import (not the subject)."""
        found = self._imports.get(filename)
        if found is None:
            if filename.startswith("<") and not filename.startswith("<frozen"):
                found = False  # exec() of a string: part of whatever called it
            else:
                found = self.own is None or os.path.abspath(filename) != self.own
            self._imports[filename] = found
        return found

    def _call(self, frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        name = code.co_name
        if (name == MODULE_BODY and self._is_import(code.co_filename)) or (
            name == IMPORTLIB[1] and code.co_filename == IMPORTLIB[0]
        ):
            self.importing += 1
            return self._import_body
        if self.importing or self.collecting or not sites.is_user_file(code.co_filename):
            return None
        self.raw.add((code.co_filename, frame.f_lineno))
        return self._line

    def _import_body(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "return":  # also sent when the body ends with an exception
            self.importing -= 1
            return None
        frame.f_trace_lines = False
        return self._import_body

    def _line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and not self.collecting:
            self.raw.add((frame.f_code.co_filename, frame.f_lineno))
        return self._line

    def _gc_start(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":  # first of the callbacks: the others run after this
            self.collecting = True

    def _gc_stop(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop":  # last of the callbacks
            self.collecting = False

    @contextmanager
    def active(self) -> Iterator[Coverage]:
        global _ACTIVE
        previous, outer = sys.gettrace(), _ACTIVE
        gc.callbacks.insert(0, self._gc_start)
        gc.callbacks.append(self._gc_stop)
        sys.settrace(self._call)
        _ACTIVE, self.thread = self, threading.get_ident()
        try:
            yield self
        finally:
            sys.settrace(previous)
            _ACTIVE = outer
            self.importing = 0
            for callback in (self._gc_start, self._gc_stop):
                if callback in gc.callbacks:
                    gc.callbacks.remove(callback)
            self.collecting = False

    def adopt(self, frame: FrameType | None) -> None:
        """Trace the calling thread from now on, and its running user frames (``frame`` and
        its callers) from their current lines."""
        sys.settrace(self._adopted)
        while frame is not None:
            code = frame.f_code
            if not self.importing and sites.is_user_file(code.co_filename):
                self.raw.add((code.co_filename, frame.f_lineno))
                frame.f_trace = self._adopted_line
            frame = frame.f_back

    def _adopted(self, frame: FrameType, event: str, arg: Any) -> Any:
        if _ACTIVE is not self:  # the run is over: leave the thread as it was
            sys.settrace(None)
            return None
        return self._call(frame, event, arg)

    def _adopted_line(self, frame: FrameType, event: str, arg: Any) -> Any:
        if _ACTIVE is not self:
            return None
        return self._line(frame, event, arg)

    def lines(self) -> set[tuple[str, int]]:
        """The lines that ran, as absolute paths. A frame that was being traced keeps its
        local trace function after ``active`` ends, so lines can still be added while this
        runs (seen under load); ``set.copy`` takes the snapshot without running Python."""
        return {(os.path.abspath(f), line) for f, line in self.raw.copy()}


#: The coverage recording the run now (runs do not overlap), for threads that join it.
_ACTIVE: Coverage | None = None


def follow_this_thread() -> None:
    """Trace the calling thread too, when a run is being recorded and nothing traces this
    thread (autograd's device thread on CUDA). Cheap when there is nothing to do: it is called
    at every op pass A sees."""
    coverage = _ACTIVE
    if coverage is None or sys.gettrace() is not None:
        return
    if threading.get_ident() == coverage.thread:
        return  # the run's own thread, between a nested tracer's removal and ``active``'s end
    coverage.adopt(sys._getframe(1))

"""Faults injected into an ``inplace-lint`` process, for tests/test_failure_paths.py only.

Put this folder on ``PYTHONPATH`` and Python imports this module as the process starts; each
fault is off unless its environment variable names files or folders (comma-separated names):

* ``INPLACE_LINT_FAULT_DENY``: listing, opening, creating or reading it, or anything below it,
  fails with EACCES, as for a user without permission (root, who runs these tests here, may
  do anything);
* ``INPLACE_LINT_FAULT_KILL``: a ``--jobs`` worker that starts linting it dies at once, as on a
  segfault or the OOM killer (with ``INPLACE_LINT_FAULT_KILL_ONCE=PATH`` only the first time,
  which creates PATH);
* ``INPLACE_LINT_FAULT_NO_WRITE``: renaming a fixed copy over it fails with ENOSPC.
"""

from __future__ import annotations

import errno
import io
import os
from typing import Any


def _names(variable: str) -> frozenset[str]:
    return frozenset(filter(None, os.environ.get(variable, "").split(",")))


def _last(path: Any) -> str:
    try:
        return os.path.basename(os.path.normpath(os.fsdecode(path)))
    except TypeError:  # a file descriptor
        return ""


def _deny(names: frozenset[str]) -> None:
    import builtins

    real_scandir, real_open, real_os_open, real_mkdir = os.scandir, io.open, os.open, os.mkdir

    def refuse(path: Any) -> None:
        if isinstance(path, int):
            return
        parts = os.path.normpath(os.fsdecode(path)).split(os.sep)
        if names.intersection(parts):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))

    def scandir(path: Any = ".") -> Any:
        refuse(path)
        return real_scandir(path)

    def open_(file: Any, *args: Any, **kwargs: Any) -> Any:
        refuse(file)
        return real_open(file, *args, **kwargs)

    def os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        refuse(path)
        return real_os_open(path, *args, **kwargs)

    def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        refuse(path)
        real_mkdir(path, *args, **kwargs)

    os.scandir = scandir
    os.open = os_open
    os.mkdir = mkdir
    io.open = builtins.open = open_


def _kill(names: frozenset[str]) -> None:
    import multiprocessing

    from inplace_lint import engine

    real = engine.lint_path
    once = os.environ.get("INPLACE_LINT_FAULT_KILL_ONCE")

    def lint_path(path: Any, display: str, config: Any, project: Any = None) -> Any:
        if _last(path) in names and multiprocessing.parent_process() is not None:
            if once is None:
                os._exit(70)
            try:
                os.close(os.open(once, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                pass
            else:
                os._exit(70)
        return real(path, display, config, project)

    engine.lint_path = lint_path


def _no_write(names: frozenset[str]) -> None:
    real = os.replace

    def replace(src: Any, dst: Any, **kwargs: Any) -> None:
        if _last(dst) in names:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fsdecode(dst))
        real(src, dst, **kwargs)

    os.replace = replace


for _variable, _install in (
    ("INPLACE_LINT_FAULT_DENY", _deny),
    ("INPLACE_LINT_FAULT_KILL", _kill),
    ("INPLACE_LINT_FAULT_NO_WRITE", _no_write),
):
    if _names(_variable):
        _install(_names(_variable))

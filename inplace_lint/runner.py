"""Lint many files: cache look-ups here, the misses in a process pool (or in-process).

The pool is sent paths, not trees, and sends back ``FileResult`` objects (frozen dataclasses of
plain values). Each worker lints in its main thread, so a signal-based time guard in the engine
works there as it does in-process. Results come back in the order the files were given, so the
output does not depend on ``--jobs``.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from inplace_lint import engine
from inplace_lint.cache import CACHE_DIR_NAME, Cache
from inplace_lint.checks import PARSE_ERROR
from inplace_lint.config import Config, find_pyproject
from inplace_lint.engine import MAX_BYTES, FileResult
from inplace_lint.project import build_views
from inplace_lint.project_view import ProjectView

#: Set to print the cache's hit/miss counts on standard error after a run.
STATS_ENV = "INPLACE_LINT_CACHE_STATS"


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def cache_root(config: Config, anchors: Sequence[Path]) -> Path:
    """The folder holding the project's pyproject.toml (the config's, else the nearest), or cwd."""
    if config.source is not None:
        return config.source.resolve().parent
    start = anchors[0] if anchors else Path.cwd()
    found = find_pyproject(start) if os.path.exists(start) else None
    return found.parent if found is not None else Path.cwd()


def open_cache(
    config: Config, anchors: Sequence[Path], disabled: bool, folder: Path | None
) -> Cache | None:
    """The cache for this run, or None with ``--no-cache``."""
    if disabled:
        return None
    return Cache(folder if folder is not None else cache_root(config, anchors) / CACHE_DIR_NAME)


@dataclass(frozen=True)
class _Stamp:
    """What must not change between reading a file for its key and storing its findings."""

    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> _Stamp:
        return cls(st.st_ino, st.st_size, st.st_mtime_ns)


def _probe(path: Path) -> tuple[bytes, _Stamp] | None:
    """The bytes of a regular file small enough to lint, with its stamp; None otherwise."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return None  # lint_path reports it; a FIFO is never opened here
        with open(path, "rb") as handle:
            before = os.fstat(handle.fileno())
            data = handle.read()
    except OSError:
        return None
    return data, _Stamp.of(before)


def _unchanged(path: Path, stamp: _Stamp) -> bool:
    try:
        return _Stamp.of(os.stat(path)) == stamp
    except OSError:
        return False


def _cacheable(result: FileResult) -> bool:
    """Not an unreadable file, nor one that ran out of its time budget (that depends on load)."""
    return result.error is None and not any(
        f.code == PARSE_ERROR and "time" in f.message for f in result.findings
    )


def lint_files(
    files: Sequence[tuple[Path, str]],
    config: Config,
    jobs: int | None = None,
    cache: Cache | None = None,
    progress: Callable[[], None] | None = None,
    project: bool = True,
    views: dict[int, ProjectView] | None = None,
) -> list[FileResult]:
    """Lint ``(path, display)`` pairs; results in the same order, whatever ``jobs`` is.

    ``progress`` is called once per file as its result arrives (cache hits included);
    ``project``: the files are read together (``inplace_lint.project``), when several;
    ``views``: those readings, when the caller already built them (``build_views(files)``).
    """
    results: list[FileResult | None] = [None] * len(files)
    if views is None:
        views = build_views(files) if project else {}
    keys: dict[int, tuple[str, _Stamp]] = {}
    todo: list[int] = []
    for index, (path, display) in enumerate(files):
        # A notebook's findings carry cells, which cache entries do not hold: it is linted anew.
        probe = _probe(path) if cache is not None and path.suffix != ".ipynb" else None
        if cache is not None and probe is not None:
            data, stamp = probe
            view = views.get(index)
            extra = view.digest() if view is not None else b""
            extra += b"\0assume-grad" if config.assume_grad else b""
            key = cache.key(data + extra, display, config.codes_for(str(path)))
            hit = cache.get(key, display)
            if hit is not None:
                results[index] = FileResult(display, hit)
                if progress is not None:
                    progress()
                continue
            keys[index] = (key, stamp)
        todo.append(index)

    def store(index: int, result: FileResult) -> None:
        results[index] = result
        if progress is not None:
            progress()
        entry = keys.get(index)
        if cache is not None and entry is not None and _cacheable(result):
            key, stamp = entry
            if _unchanged(files[index][0], stamp):
                cache.put(key, result.findings)

    workers = min(jobs or default_jobs(), len(todo))
    if workers <= 1:
        for index in todo:
            path, display = files[index]
            store(index, engine.lint_path(path, display, config, views.get(index)))
    else:
        _run_pool(files, todo, config, workers, store, views)
    if cache is not None and os.environ.get(STATS_ENV):
        s = cache.stats
        print(
            f"inplace-lint: cache {cache.folder}: {s.hits} hits, {s.misses} misses, "
            f"{s.writes} writes, {s.damaged} damaged, {s.write_errors} write errors",
            file=sys.stderr,
        )
    return [r for r in results if r is not None]


_CONFIG: Config | None = None


def _init_worker(config: Config) -> None:
    global _CONFIG
    _CONFIG = config
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and cancels


def _work(index: int, path: str, display: str, view: ProjectView | None) -> tuple[int, FileResult]:
    assert _CONFIG is not None
    return index, engine.lint_path(Path(path), display, _CONFIG, view)


def _context() -> multiprocessing.context.BaseContext:
    """fork on Linux (workers inherit the imported analysis), the platform default elsewhere."""
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _run_pool(
    files: Sequence[tuple[Path, str]],
    todo: list[int],
    config: Config,
    workers: int,
    store: Callable[[int, FileResult], None],
    views: Mapping[int, ProjectView],
) -> None:
    """Lint ``todo`` in ``workers`` processes, largest files first; one retry if a worker dies."""
    order = sorted(todo, key=lambda i: _size(files[i][0]), reverse=True)
    for attempt in (1, 2):
        done: set[int] = set()
        try:
            pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=_context(),
                initializer=_init_worker,
                initargs=(config,),
            )
        except (OSError, NotImplementedError):  # no semaphores here: lint in-process
            for index in order:
                path, display = files[index]
                store(index, engine.lint_path(path, display, config, views.get(index)))
            return
        try:
            futures: list[Future[tuple[int, FileResult]]] = [
                pool.submit(_work, i, str(files[i][0]), files[i][1], views.get(i)) for i in order
            ]
            for future in as_completed(futures):
                index, result = future.result()
                store(index, result)
                done.add(index)
        except BrokenProcessPool:
            order = [i for i in order if i not in done]
            if attempt == 2:
                for index in order:
                    display = files[index][1]
                    message = f"cannot lint {display}: a worker process died (try --jobs 1)"
                    store(index, FileResult(display, (), error=message))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        else:
            pool.shutdown()
            return
        pool.shutdown(wait=False, cancel_futures=True)

"""The static side of ``confirm``: lint the files that hold a line the run executed.

Only files with a reached line (``coverage.Coverage`` leaves import-time lines out) are
linted, so a library that was only imported costs nothing and reports nothing. Each file is
linted with its project's configuration (the nearest pyproject.toml) unless ``codes`` says
which rules, through the same per-file cache as ``inplace-lint check`` (in that project's
``.inplace-lint-cache/``, else the current folder's), in this process: no worker pool is
forked from a process that holds torch and maybe a CUDA context.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from inplace_lint.checks import PARSE_ERROR
from inplace_lint.config import Config, ConfigError, find_pyproject, load_config
from inplace_lint.finding import Finding
from inplace_lint.runner import lint_files, open_cache

__all__ = ["display", "lint_reached", "reached_files"]


def display(path: str) -> str:
    """``path`` relative to the current folder when it lies below it, else absolute."""
    relative = os.path.relpath(path)
    return path if relative.startswith(".." + os.sep) else relative


def reached_files(lines: Iterable[tuple[str, int]], own: str | None) -> list[str]:
    """The Python files that hold a reached line, the subject's own file first."""
    files = sorted({path for path, _ in lines if path.endswith(".py") and os.path.isfile(path)})
    if own is not None and os.path.isfile(own):
        files = [own] + [f for f in files if f != own]
    return files


def _config_for(
    file: str, codes: tuple[str, ...] | None, known: dict[Path | None, Config]
) -> Config:
    if codes is not None:
        return known.setdefault(None, Config(select=codes))
    pyproject = find_pyproject(Path(file))
    if pyproject not in known:
        try:
            known[pyproject] = load_config(pyproject)
        except ConfigError:
            known[pyproject] = Config()
    return known[pyproject]


def enabled_codes(file: str, codes: Iterable[str] | None = None) -> frozenset[str]:
    """The codes reported for ``file``: ``codes`` where given, else its project's."""
    selected = tuple(codes) if codes is not None else None
    return _config_for(file, selected, {}).enabled_codes()


def lint_reached(
    files: list[str], codes: Iterable[str] | None = None, cache: bool = True
) -> list[Finding]:
    """The static findings of ``files`` (parse errors left out), in the order given."""
    selected = tuple(codes) if codes is not None else None
    known: dict[Path | None, Config] = {}
    groups: dict[int, tuple[Config, list[tuple[Path, str]]]] = {}
    for file in files:
        config = _config_for(file, selected, known)
        groups.setdefault(id(config), (config, []))[1].append((Path(file), display(file)))
    found: dict[str, list[Finding]] = {}
    for config, pairs in groups.values():
        store = open_cache(config, [pairs[0][0]], not cache, None)
        for (path, _), result in zip(
            pairs, lint_files(pairs, config, jobs=1, cache=store), strict=True
        ):
            found[str(path)] = [f for f in result.findings if f.code != PARSE_ERROR]
    return [f for file in files for f in found.get(file, [])]

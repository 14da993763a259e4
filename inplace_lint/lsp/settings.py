"""Which ``[tool.inplace-lint]`` configuration applies to an editor document."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from inplace_lint.config import Config, ConfigError, find_pyproject, load_config


@dataclass(frozen=True)
class Settings:
    """The codes to run on one document, or None when the configuration excludes it."""

    codes: frozenset[str] | None
    #: The pyproject.toml the settings came from, if any.
    source: Path | None = None
    #: Why that file could not be used (the defaults apply instead), if it could not.
    error: str | None = None
    #: ``assume-grad = true``: the opt-in findings too, as on the command line.
    assume_grad: bool = False


class ConfigCache:
    """Loads the nearest pyproject.toml per document, reloading it when the file changes.

    Each lookup re-stats the file, so an edit is picked up even when the client never sends
    ``workspace/didChangeWatchedFiles``; ``clear`` forgets everything.
    """

    def __init__(self) -> None:
        self._loaded: dict[Path, tuple[tuple[int, int], Config, str | None]] = {}

    def clear(self) -> None:
        self._loaded.clear()

    def settings(self, path: Path | None, workspace_root: Path | None) -> Settings:
        """Settings for a document at ``path`` (None for an unsaved, untitled buffer)."""
        anchor = path if path is not None else workspace_root
        pyproject = find_pyproject(anchor) if anchor is not None else None
        config, error = self._load(pyproject) if pyproject is not None else (Config(), None)
        assume = config.assume_grad
        if path is None:
            return Settings(config.enabled_codes(), pyproject, error, assume)
        if _excluded(config, path):
            return Settings(None, pyproject, error, assume)
        return Settings(config.codes_for(str(path)), pyproject, error, assume)

    def _load(self, pyproject: Path) -> tuple[Config, str | None]:
        try:
            stat = os.stat(pyproject)
            stamp = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            stamp = (0, 0)
        cached = self._loaded.get(pyproject)
        if cached is not None and cached[0] == stamp:
            return cached[1], cached[2]
        try:
            config, error = load_config(pyproject), None
        except ConfigError as exc:
            config, error = Config(root=pyproject.parent, source=pyproject), str(exc)
        self._loaded[pyproject] = (stamp, config, error)
        return config, error


def _excluded(config: Config, path: Path) -> bool:
    """True when the file, or a folder between it and the config's root, is excluded."""
    try:
        relative = path.resolve().relative_to(config.root.resolve())
    except (ValueError, OSError, RuntimeError):
        return config.is_excluded(path)
    current = config.root.resolve()
    for part in relative.parts:
        current = current / part
        if config.is_excluded(current):
            return True
    return False

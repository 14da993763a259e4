"""Settings from ``[tool.inplace-lint]`` in pyproject.toml and from the command line."""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

from inplace_lint.checks import PARSE_ERROR, all_rules

KNOWN_KEYS = frozenset(
    {
        "select",
        "ignore",
        "extend-select",
        "exclude",
        "extend-exclude",
        "per-file-ignores",
        "assume-grad",
    }
)
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", "__pycache__", "build",
    "dist", "node_modules", ".mypy_cache", ".ruff_cache", ".pytest_cache", "site-packages",
    "*.egg-info", ".inplace-lint-cache", ".eggs", "__pypackages__", ".ipynb_checkpoints",
)  # fmt: skip


class ConfigError(Exception):
    """The configuration is unusable; the message says why in one line."""


def known_codes() -> frozenset[str]:
    return frozenset(rule.code for rule in all_rules()) | {PARSE_ERROR}


def validate_codes(codes: list[str], where: str) -> list[str]:
    """Upper-case codes and reject those that match no rule (prefixes allowed)."""
    known = known_codes()
    out: list[str] = []
    for raw in codes:
        code = raw.strip().upper()
        if not code:
            continue
        if code == "ALL" or any(k.startswith(code) for k in known):
            out.append(code)
        else:
            raise ConfigError(f"{where}: unknown rule code or prefix {raw!r}")
    return out


@dataclass(frozen=True)
class Config:
    """The effective configuration for one run."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None
    #: also report hazards certain when an uncalled function's tensor inputs require grad
    assume_grad: bool = False

    def enabled_codes(self) -> frozenset[str]:
        """Codes on for every file before per-file-ignores."""
        enabled: set[str] = set()
        for rule in all_rules():
            if self.select is None:
                on = rule.default
            else:
                on = rule.code in self.select or (rule.default and _matches(rule.code, self.select))
            if rule.code in self.extend_select or (
                rule.default and _matches(rule.code, self.extend_select)
            ):
                on = True
            if on and not _matches(rule.code, self.ignore):
                enabled.add(rule.code)
        enabled.add(PARSE_ERROR)
        return frozenset(enabled)

    def codes_for(self, path: str) -> frozenset[str]:
        """Codes on for ``path``, after per-file-ignores."""
        enabled = set(self.enabled_codes())
        relative = self.relative(path)
        for pattern, codes in self.per_file_ignores:
            if _glob(relative, pattern):
                enabled = {c for c in enabled if not _matches(c, codes) or c == PARSE_ERROR}
        return frozenset(enabled)

    def relative(self, path: str) -> str:
        try:
            return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except (ValueError, OSError, RuntimeError):  # outside root, or a symlink loop
            return PurePath(path).as_posix()

    def is_excluded(self, path: Path) -> bool:
        relative = self.relative(str(path))
        name = path.name
        return any(_glob(relative, p) or fnmatch.fnmatch(name, p) for p in self.exclude)

    def with_cli(
        self,
        select: list[str] | None,
        ignore: list[str] | None,
        extend_select: list[str] | None,
    ) -> Config:
        """Command-line options override the file's select and add to its ignore."""
        updated = self
        if select is not None:
            updated = replace(updated, select=tuple(validate_codes(select, "--select")))
        if extend_select:
            extra = tuple(validate_codes(extend_select, "--extend-select"))
            updated = replace(updated, extend_select=updated.extend_select + extra)
        if ignore:
            extra = tuple(validate_codes(ignore, "--ignore"))
            updated = replace(updated, ignore=updated.ignore + extra)
        return updated


def _matches(code: str, patterns: tuple[str, ...] | list[str]) -> bool:
    return any(p == "ALL" or code.startswith(p) for p in patterns)


def _glob(relative: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, pattern + "/*"):
        return True
    parts = relative.split("/")
    return any(fnmatch.fnmatch("/".join(parts[i:]), pattern) for i in range(len(parts)))


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start``."""
    current = start.resolve()
    if os.path.isfile(current):  # os.path, unlike Path, is False (not an error) on EACCES
        current = current.parent
    for directory in (current, *current.parents):
        candidate = directory / "pyproject.toml"
        if os.path.isfile(candidate):
            return candidate
    return None


def load_config(pyproject: Path | None) -> Config:
    """Read and validate ``[tool.inplace-lint]``; no file or no table gives the defaults."""
    if pyproject is None:
        return Config()
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from exc
    tool = data.get("tool", {})
    section = tool.get("inplace-lint") if isinstance(tool, dict) else None
    root = pyproject.parent
    if section is None:
        return Config(root=root, source=pyproject)
    where = f"{pyproject}: [tool.inplace-lint]"
    if not isinstance(section, dict):
        raise ConfigError(f"{where} must be a table")
    unknown = sorted(set(section) - KNOWN_KEYS)
    if unknown:
        known = ", ".join(sorted(KNOWN_KEYS))
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known keys: {known})")
    config = Config(root=root, source=pyproject)
    if "select" in section:
        config = replace(
            config,
            select=tuple(validate_codes(_strings(section, "select", where), f"{where} select")),
        )
    if "extend-select" in section:
        codes = validate_codes(_strings(section, "extend-select", where), f"{where} extend-select")
        config = replace(config, extend_select=tuple(codes))
    if "ignore" in section:
        codes = validate_codes(_strings(section, "ignore", where), f"{where} ignore")
        config = replace(config, ignore=tuple(codes))
    if "exclude" in section:
        config = replace(config, exclude=tuple(_strings(section, "exclude", where)))
    if "extend-exclude" in section:
        extra = tuple(_strings(section, "extend-exclude", where))
        config = replace(config, exclude=config.exclude + extra)
    if "per-file-ignores" in section:
        table = section["per-file-ignores"]
        if not isinstance(table, dict):
            raise ConfigError(f"{where} per-file-ignores must be a table of pattern = [codes]")
        entries: list[tuple[str, tuple[str, ...]]] = []
        for pattern, codes in table.items():
            if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                raise ConfigError(f"{where} per-file-ignores.{pattern!r} must be a list of codes")
            entries.append((pattern, tuple(validate_codes(codes, f"{where} per-file-ignores"))))
        config = replace(config, per_file_ignores=tuple(entries))
    if "assume-grad" in section:
        value = section["assume-grad"]
        if not isinstance(value, bool):
            raise ConfigError(f"{where} assume-grad must be true or false, got {value!r}")
        config = replace(config, assume_grad=value)
    return config


def _strings(section: dict[str, object], key: str, where: str) -> list[str]:
    value = section[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} {key} must be a list of strings, got {value!r}")
    return list(value)

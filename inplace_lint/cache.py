"""A per-file findings cache under ``.inplace-lint-cache/`` in the project root.

One entry (a small JSON file) per linted file, named by a key that hashes the file's bytes, the
name it is reported under, the codes enabled for it, the tool version and a fingerprint of this
package's own sources and data (so editing the analysis invalidates every entry). Entries are
written to a temporary file and renamed into place, so a reader sees a whole entry or none; an
entry that does not decode or validate is treated as a miss and rewritten. JSON, not pickle: a
cache folder can arrive with a cloned repository and must never run code.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inplace_lint import __version__
from inplace_lint.finding import Edit, Finding, Fix, Position, Related

#: The folder name, in the project root unless ``--cache-dir`` says otherwise.
CACHE_DIR_NAME = ".inplace-lint-cache"
#: Bumped when the entry layout changes.
FORMAT = 1
#: Fingerprint folders and temporary files untouched this long are removed when a new one starts.
STALE_SECONDS = 7 * 24 * 3600


@functools.cache
def package_fingerprint() -> str:
    """A hash of this package's version, sources and data, and the Python and libcst versions."""
    return folder_fingerprint(Path(__file__).resolve().parent)


def folder_fingerprint(package: Path) -> str:
    """A hash of every file under ``package`` (bytecode aside) and the versions it runs with."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{__version__}|{sys.version_info[:2]}|{_libcst_version()}|".encode())
    files = sorted(
        p
        for p in package.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
    )
    for file in files:
        digest.update(file.relative_to(package).as_posix().encode() + b"\0")
        try:
            digest.update(hashlib.blake2b(file.read_bytes(), digest_size=16).digest())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


def _libcst_version() -> str:
    try:
        from libcst._version import __version__ as version
    except ImportError:  # pragma: no cover - layout of another libcst release
        return "?"
    return str(version)


@dataclass
class CacheStats:
    """What one run did with the cache."""

    hits: int = 0
    misses: int = 0
    writes: int = 0
    damaged: int = 0
    write_errors: int = 0


class Cache:
    """Findings per file, stored under ``root``; every failure degrades to a miss."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / f"v{FORMAT}-{package_fingerprint()[:20]}"
        self.stats = CacheStats()
        self._prepared = False

    @staticmethod
    def key(data: bytes, display: str, codes: Iterable[str]) -> str:
        """The entry name for ``data`` reported as ``display`` with ``codes`` enabled."""
        digest = hashlib.blake2b(digest_size=20)
        digest.update(package_fingerprint().encode())
        digest.update(b"\0" + display.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(",".join(sorted(codes)).encode() + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def get(self, key: str, display: str) -> tuple[Finding, ...] | None:
        """The cached findings for ``key`` (reported as ``display``), or None on a miss."""
        try:
            raw = (self.folder / f"{key}.json").read_bytes()
        except OSError:
            self.stats.misses += 1
            return None
        try:
            findings = _decode(raw, key, display)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            self.stats.damaged += 1
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        return findings

    def put(self, key: str, findings: Iterable[Finding]) -> None:
        """Store ``findings`` under ``key`` atomically; errors are counted, never raised."""
        findings = tuple(findings)
        payload = {"format": FORMAT, "key": key, "findings": [_encode(f) for f in findings]}
        data = json.dumps(payload, separators=(",", ":")).encode()
        if findings and _decode(data, key, findings[0].path) != findings:
            self.stats.write_errors += 1  # a Finding field this format does not know yet
            return
        try:
            self._prepare()
            _atomic_write(self.folder / f"{key}.json", data)
        except OSError:
            self.stats.write_errors += 1
            return
        self.stats.writes += 1

    def _prepare(self) -> None:
        """Create the folders, the .gitignore and CACHEDIR.TAG; prune stale fingerprints."""
        if self._prepared:
            return
        fresh = not self.folder.is_dir()
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, text in (
            (".gitignore", "# Created by inplace-lint.\n*\n"),
            (
                "CACHEDIR.TAG",
                "Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by inplace-lint.\n",
            ),
        ):
            if not (self.root / name).is_file():
                _atomic_write(self.root / name, text.encode())
        if fresh:
            self._prune()
        self._prepared = True

    def _prune(self) -> None:
        """Remove other fingerprint folders and stray temporary files not touched for a week."""
        cutoff = time.time() - STALE_SECONDS
        for child in self.root.iterdir():
            if child == self.folder or not child.name.startswith("v"):
                continue
            try:
                if not child.is_dir() or child.stat().st_mtime >= cutoff:
                    continue
                for entry in child.iterdir():
                    entry.unlink(missing_ok=True)
                child.rmdir()
            except OSError:
                continue  # another run is using or removing it


def _atomic_write(target: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``target`` and rename it into place."""
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as stream:
            os.fchmod(stream.fileno(), 0o644)  # mkstemp's 0600 would hide it from other users
            stream.write(data)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _position(value: Any) -> Position:
    line, column = value
    if not (type(line) is int and type(column) is int):
        raise TypeError("position")
    return Position(line, column)


def _string(value: Any) -> str:
    if type(value) is not str:
        raise TypeError("string")
    return value


def _encode(finding: Finding) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "s": [finding.start.line, finding.start.column],
        "e": [finding.end.line, finding.end.column],
        "c": finding.code,
        "m": finding.message,
    }
    if finding.related:
        entry["r"] = [[[r.position.line, r.position.column], r.message] for r in finding.related]
    if finding.fix is not None:
        fix = finding.fix
        entry["f"] = {
            "d": fix.description,
            "safe": fix.safe,
            "edits": [
                [[e.start.line, e.start.column], [e.end.line, e.end.column], e.text]
                for e in fix.edits
            ],
        }
    if finding.statement_lines is not None:
        entry["l"] = list(finding.statement_lines)
    return entry


def _decode(raw: bytes, key: str, display: str) -> tuple[Finding, ...]:
    """Rebuild the findings of one entry; any surprise raises (and the entry counts as damaged)."""
    payload = json.loads(raw)
    if payload.get("format") != FORMAT or payload.get("key") != key:
        raise ValueError("entry is for another key or format")
    findings = []
    for item in payload["findings"]:
        fix = None
        if "f" in item:
            data = item["f"]
            if type(data["safe"]) is not bool:
                raise TypeError("fix.safe")
            edits = tuple(
                Edit(_position(start), _position(end), _string(text))
                for start, end, text in data["edits"]
            )
            fix = Fix(_string(data["d"]), edits, data["safe"])
        lines = None
        if "l" in item:
            first, last = item["l"]
            if not (type(first) is int and type(last) is int):
                raise TypeError("statement lines")
            lines = (first, last)
        findings.append(
            Finding(
                path=display,
                start=_position(item["s"]),
                end=_position(item["e"]),
                code=_string(item["c"]),
                message=_string(item["m"]),
                related=tuple(
                    Related(_position(where), _string(text)) for where, text in item.get("r", ())
                ),
                fix=fix,
                statement_lines=lines,
            )
        )
    return tuple(findings)

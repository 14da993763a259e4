"""Measure inplace-lint's first-run precision on real PyTorch projects it was never tuned on.

The projects are pinned PyPI releases listed in ``bench/untuned_projects.json`` (timm,
torchvision, transformers and diffusers, the corpora used to tune the engine, are deliberately
not among them). Each release is unpacked by the helpers of ``bench/corpora.py`` so that only
its Python sources remain::

    bench/.untuned/<name>-<version>/<package>/.../*.py

and the linter is run on each folder exactly as a user would, with the default rule set::

    .venv/bin/python -m inplace_lint check --isolated --exit-zero --no-cache --format json \\
        --jobs 2 bench/.untuned/<name>-<version>

The raw findings are saved next to the sources (``bench/.untuned/findings-<name>.json``, with
the linter's commit and the date), and a table is printed: files, physical lines, lines of
code (neither blank nor a comment) and findings per code.

With ``--verdicts FILE`` the findings are matched against a verdicts file, keyed by
``<name>/<path inside the release>:<line>:<code>``::

    {"verdicts": {"kornia/kornia/x.py:12:IPL001": {"verdict": "real", "reason": "..."}}}

where a verdict is ``real``, ``real-conditional`` or ``false``, and the table adds the counts and
the precision (real / findings, and real plus real-conditional / findings).

Usage::

    .venv/bin/python bench/untuned.py                       # fetch, lint, tabulate
    .venv/bin/python bench/untuned.py --only kornia         # one project (repeatable)
    .venv/bin/python bench/untuned.py --assume-grad         # the opt-in findings too
    .venv/bin/python bench/untuned.py --saved --verdicts bench/untuned_verdicts.json
    .venv/bin/python bench/untuned.py --saved --verdicts bench/untuned_verdicts.json --markdown

Run 2 used other projects, another folder and a pinned checkout of the linter (``--linter DIR``:
the linter is imported from ``DIR``, run there with ``PYTHONPATH=DIR`` and ``python -P`` so that
nothing else on the path is picked up, and its commit is read from ``DIR``)::

    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_2.json \
        --dest bench/.untuned/run2 --linter /work/base21
    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_2.json \
        --dest bench/.untuned/run2 --saved --verdicts bench/untuned_verdicts_2.json --markdown

Run 3 used the same options with its own files (``bench/untuned_projects_3.json``,
``bench/.untuned/run3``, ``--linter /work/base22``, ``bench/untuned_verdicts_3.json``).
``--projects-table`` also prints one row per project: version, domain, size, the archive the
sources came from and the wall time of its one linter call (read from the saved records)::

    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_3.json \
        --dest bench/.untuned/run3 --saved --projects-table --markdown

Run 4 used the same options with its own files (``bench/untuned_projects_4.json``,
``bench/.untuned/run4``, ``--linter /work/base23``, ``bench/untuned_verdicts_4.json``).
``--per-code`` (with ``--verdicts``) also prints real / real-conditional / false per code::

    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_4.json \
        --dest bench/.untuned/run4 --saved --verdicts bench/untuned_verdicts_4.json \
        --projects-table --per-code --list --markdown

Run 5 used the same options with its own files (``bench/untuned_projects_5.json``,
``bench/.untuned/run5``, ``--linter /work/base24``, ``bench/untuned_verdicts_5.json``)::

    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_5.json \
        --dest bench/.untuned/run5 --linter /work/base24
    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_5.json \
        --dest bench/.untuned/run5 --saved --verdicts bench/untuned_verdicts_5.json \
        --projects-table --per-code --list --markdown

Run 6 used the same options with its own files (``bench/untuned_projects_6.json``,
``bench/.untuned/run6``, ``--linter /work/base26``, ``bench/untuned_verdicts_6.json``)::

    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_6.json \
        --dest bench/.untuned/run6 --linter /work/base26
    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_6.json \
        --dest bench/.untuned/run6 --saved --verdicts bench/untuned_verdicts_6.json \
        --projects-table --per-code --list --markdown

Run 7 used the same options with its own files (``bench/untuned_projects_7.json``,
``bench/.untuned/run7``, ``--linter /work/base27``, ``bench/untuned_verdicts_7.json``)::

    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_7.json \
        --dest bench/.untuned/run7 --linter /work/base27
    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_7.json \
        --dest bench/.untuned/run7 --saved --verdicts bench/untuned_verdicts_7.json \
        --projects-table --per-code --list --markdown

Run 8 used the same options with its own files (``bench/untuned_projects_8.json``,
``bench/.untuned/run8``, ``--linter /work/base28``, ``bench/untuned_verdicts_8.json``)::

    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_8.json \
        --dest bench/.untuned/run8 --linter /work/base28
    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_8.json \
        --dest bench/.untuned/run8 --saved --verdicts bench/untuned_verdicts_8.json \
        --projects-table --per-code --list --markdown

Run 9 used the same options with its own files (``bench/untuned_projects_9.json``,
``bench/.untuned/run9``, ``--linter /work/base29``, ``bench/untuned_verdicts_9.json``).
``--project-mean`` (with ``--verdicts``) also prints the precision of each project that has
findings and their unweighted mean, so that one large project does not decide the figure alone::

    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_9.json \
        --dest bench/.untuned/run9 --linter /work/base29
    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_9.json \
        --dest bench/.untuned/run9 --saved --verdicts bench/untuned_verdicts_9.json \
        --projects-table --per-code --project-mean --list --markdown

Run 10 used the same options with its own files (``bench/untuned_projects_10.json``,
``bench/.untuned/run10``, ``--linter /work/base33``, ``bench/untuned_verdicts_10.json``). When
``corpora.fetch`` fails (no wheel, and ``pip download --no-binary=:all:`` cannot build the sdist's
metadata because it builds the build requirements from source too, as for fairseq and sam2), the
release is fetched once more with pip's default options (``fetch_default``)::

    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_10.json \
        --dest bench/.untuned/run10 --linter /work/base33
    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_10.json \
        --dest bench/.untuned/run10 --saved --verdicts bench/untuned_verdicts_10.json \
        --projects-table --per-code --project-mean --list --markdown

Run 11 used the same options with its own files (``bench/untuned_projects_11.json``,
``bench/.untuned/run11``, ``--linter /work/base35``, ``bench/untuned_verdicts_11.json``); yolox,
also picked, could not be fetched (its ``setup.py`` needs torch to build the metadata)::

    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_11.json \
        --dest bench/.untuned/run11 --linter /work/base35
    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_11.json \
        --dest bench/.untuned/run11 --saved --verdicts bench/untuned_verdicts_11.json \
        --projects-table --per-code --project-mean --list --markdown

Run 12 used the same options with its own files (``bench/untuned_projects_12.json``,
``bench/.untuned/run12``, ``--linter /work/base37``, ``bench/untuned_verdicts_12.json``)::

    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_12.json \
        --dest bench/.untuned/run12 --linter /work/base37
    .venv/bin/python bench/untuned.py --projects bench/untuned_projects_12.json \
        --dest bench/.untuned/run12 --saved --verdicts bench/untuned_verdicts_12.json \
        --projects-table --per-code --project-mean --list --markdown
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from corpora import (  # noqa: E402
    MARKER,
    Corpus,
    FetchError,
    _pip_download,
    fetch,
    measure,
    unpack,
)

DEFAULT_PROJECTS = BENCH / "untuned_projects.json"
DEFAULT_DEST = BENCH / ".untuned"
DEFAULT_PYTHON = ROOT / ".venv" / "bin" / "python"

#: One table column per code, in this order (IPL008 is opt-in and stays off).
CODES = ("IPL001", "IPL002", "IPL003", "IPL004", "IPL005", "IPL006", "IPL007", "IPL999")

#: The verdicts a finding can get.
VERDICTS = ("real", "real-conditional", "false")

#: What the CLI prints on stderr when an exception escapes the analysis.
INTERNAL = "internal error"


@dataclass(frozen=True)
class Project:
    """One pinned release, as listed in the projects file."""

    name: str
    version: str
    package: str
    domain: str = ""
    size: str = ""

    @property
    def corpus(self) -> Corpus:
        return Corpus(self.name, self.version, self.package)

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.version}"


@dataclass
class Result:
    """The findings of one project and the size of its sources."""

    project: Project
    files: int = 0
    lines: int = 0
    code: int = 0
    seconds: float = 0.0
    findings: list[dict[str, object]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)

    def counts(self) -> Counter[str]:
        return Counter(str(f["code"]) for f in self.findings)

    def key(self, finding: dict[str, object]) -> str:
        """``<name>/<path inside the release>:<line>:<code>``, the verdicts file's key."""
        path = Path(str(finding["path"]))
        prefix = Path("bench") / ".untuned" / self.project.folder
        try:
            inside = path.relative_to(prefix).as_posix()
        except ValueError:
            inside = path.as_posix().split(f"{self.project.folder}/", 1)[-1]
        return f"{self.project.name}/{inside}:{finding['line']}:{finding['code']}"


def load_projects(path: Path) -> list[Project]:
    """Read the projects file: ``{"projects": [{"name", "version", "package", ...}]}``."""
    data = json.loads(path.read_text())
    return [
        Project(p["name"], p["version"], p["package"], p.get("domain", ""), p.get("size", ""))
        for p in data["projects"]
    ]


def linter_commit(root: Path = ROOT) -> str:
    """The short commit of the linter's repository ``root`` (read-only git queries), with
    ``+dirty`` when ``inplace_lint/`` differs from it: then the run is not the run of that
    commit."""
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    status = subprocess.run(
        [
            "git",
            "--no-optional-locks",
            "-C",
            str(root),
            "status",
            "--porcelain",
            "--",
            "inplace_lint",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    commit = head.stdout.strip() or "unknown"
    return f"{commit}+dirty" if status.stdout.strip() else commit


def count_lines(folder: Path) -> tuple[int, int, int]:
    """``.py`` files under ``folder``, their physical lines and their non-blank lines."""
    files = lines = code = 0
    for path in folder.rglob("*.py"):
        files += 1
        for raw in path.read_bytes().splitlines():
            lines += 1
            stripped = raw.strip()
            if stripped and not stripped.startswith(b"#"):
                code += 1
    return files, lines, code


def lint(
    targets: Sequence[str],
    python: str,
    jobs: int,
    linter: Path | None = None,
    extra: Sequence[str] = (),
) -> tuple[list[dict[str, object]] | None, list[str]]:
    """Run the linter once; return the JSON findings (None on an internal error) and stderr.

    With ``linter`` the package is imported from that checkout only: the command runs there,
    with ``PYTHONPATH`` set to it and ``-P`` (no script or current folder on the path)."""
    env = None
    isolation: list[str] = []
    if linter is not None:
        env = {**os.environ, "PYTHONPATH": str(linter)}
        isolation = ["-P"]
    command = [
        python,
        *isolation,
        "-m",
        "inplace_lint",
        "check",
        "--isolated",
        "--exit-zero",
        "--no-cache",
        "--format",
        "json",
        "--jobs",
        str(jobs),
        *extra,
        *targets,
    ]
    done = subprocess.run(
        command, cwd=linter or ROOT, env=env, capture_output=True, text=True, check=False
    )
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    if any(INTERNAL in line for line in errors):
        return None, errors
    try:
        findings = json.loads(done.stdout or "[]")
    except json.JSONDecodeError:
        return None, [*errors, f"unreadable output (exit {done.returncode})"]
    return findings, errors


def bisect(
    files: Sequence[str],
    python: str,
    jobs: int,
    result: Result,
    linter: Path | None = None,
    extra: Sequence[str] = (),
) -> None:
    """Lint ``files``; on an internal error split them until each crashing file is alone."""
    findings, errors = lint(files, python, jobs, linter, extra)
    if findings is not None:
        result.findings.extend(findings)
        result.errors.extend(errors)
        return
    if len(files) == 1:
        result.crashes.append(f"{files[0]}: {errors[-1] if errors else 'no output'}")
        return
    middle = len(files) // 2
    bisect(files[:middle], python, jobs, result, linter, extra)
    bisect(files[middle:], python, jobs, result, linter, extra)


def check_project(
    project: Project,
    dest: Path,
    python: str,
    jobs: int,
    linter: Path | None = None,
    extra: Sequence[str] = (),
) -> Result:
    """Lint one unpacked project and save its findings next to it. With ``linter`` (a checkout
    the linter runs from, in its own folder) the paths are given absolute."""
    folder = dest.resolve() / project.folder if linter is not None else dest / project.folder
    result = Result(project)
    result.files, result.lines, result.code = count_lines(folder)

    def shown(path: Path) -> str:
        if linter is None and path.is_relative_to(ROOT):
            return path.relative_to(ROOT).as_posix()
        return str(path)

    start = time.perf_counter()
    findings, errors = lint([shown(folder)], python, jobs, linter, extra)
    if findings is None:
        print(f"  {project.folder}: internal error, bisecting ...", flush=True)
        result.errors.extend(f"whole-folder run: {line}" for line in errors[-5:])
        files = sorted(shown(p) for p in folder.rglob("*.py"))
        bisect(files, python, jobs, result, linter, extra)
    else:
        result.findings = findings
        result.errors = errors
    result.seconds = time.perf_counter() - start
    result.findings.sort(key=lambda f: (str(f["path"]), int(str(f["line"])), str(f["code"])))
    return result


def save(
    result: Result, dest: Path, commit: str, linter: Path | None = None, tag: str = ""
) -> None:
    """Write ``findings-<name>.json``: the findings and how they were obtained."""
    record = {
        "project": result.project.name,
        "version": result.project.version,
        "commit": commit,
        "linter": str(linter or ROOT),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        "files": result.files,
        "lines": result.lines,
        "code": result.code,
        "seconds": round(result.seconds, 1),
        "errors": result.errors,
        "crashes": result.crashes,
        "findings": result.findings,
    }
    name = f"findings-{result.project.name}{tag}.json"
    (dest / name).write_text(json.dumps(record, indent=1) + "\n")


def load_saved(project: Project, dest: Path, tag: str = "") -> tuple[Result, str]:
    """The findings a previous run saved, and the linter commit it ran at."""
    record = json.loads((dest / f"findings-{project.name}{tag}.json").read_text())
    result = Result(
        project,
        files=record["files"],
        lines=record["lines"],
        code=record.get("code", 0),
        seconds=record["seconds"],
        findings=record["findings"],
        errors=record["errors"],
        crashes=record["crashes"],
    )
    return result, f"{record['commit']} on {record['when'][:10]}"


def load_verdicts(path: Path) -> dict[str, dict[str, str]]:
    """``{key: {"verdict": ..., "reason": ...}}`` from a verdicts file (with or without a
    top-level ``"verdicts"`` object)."""
    data = json.loads(path.read_text())
    verdicts = data.get("verdicts", data)
    for key, entry in verdicts.items():
        if entry.get("verdict") not in VERDICTS:
            raise ValueError(f"{path}: {key}: verdict must be one of {', '.join(VERDICTS)}")
    return verdicts


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def table_rows(
    results: Sequence[Result], verdicts: dict[str, dict[str, str]] | None
) -> tuple[list[str], list[list[str]]]:
    """The table's header and rows (one per project, then a total)."""
    heads = ["project", "files", "lines", "code", *CODES, "total"]
    if verdicts is not None:
        heads += ["real", "cond", "false", "open", "precision", "prec+cond"]
    rows: list[list[str]] = []
    total_codes: Counter[str] = Counter()
    total_verdicts: Counter[str] = Counter()
    for result in results:
        counts = result.counts()
        total_codes.update(counts)
        cells = [
            result.project.folder,
            str(result.files),
            f"{result.lines:,}",
            f"{result.code:,}",
            *[str(counts.get(code, 0)) for code in CODES],
            str(len(result.findings)),
        ]
        if verdicts is not None:
            tally = Counter(
                verdicts.get(result.key(f), {}).get("verdict", "open") for f in result.findings
            )
            total_verdicts.update(tally)
            cells += verdict_cells(tally, len(result.findings))
        rows.append(cells)
    findings = sum(len(r.findings) for r in results)
    total = [
        "total",
        str(sum(r.files for r in results)),
        f"{sum(r.lines for r in results):,}",
        f"{sum(r.code for r in results):,}",
        *[str(total_codes.get(code, 0)) for code in CODES],
        str(findings),
    ]
    if verdicts is not None:
        total += verdict_cells(total_verdicts, findings)
    rows.append(total)
    return heads, rows


def verdict_cells(tally: Counter[str], findings: int) -> list[str]:
    real, cond = tally["real"], tally["real-conditional"]
    return [
        str(real),
        str(cond),
        str(tally["false"]),
        str(tally["open"]),
        percent(real, findings),
        percent(real + cond, findings),
    ]


def print_table(heads: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(heads) + " |")
        print("|---|" + "---:|" * (len(heads) - 1))
        for cells in rows:
            shown = [f"**{c}**" for c in cells] if cells[0] == "total" else list(cells)
            print("| " + " | ".join(shown) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    for cells in [heads, *rows]:
        line = [cells[0].ljust(widths[0])]
        line += [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        print(" ".join(line))


def fetch_default(project: Project, dest: Path) -> None:
    """Fallback when ``corpora.fetch`` finds no wheel and cannot build the sdist with
    ``--no-binary=:all:`` (which also builds the build requirements from source, and fails for
    sdists such as fairseq's and sam2's): a plain ``pip download --no-deps`` (pip prepares the
    metadata with binary build requirements), unpacked and marked as ``corpora.fetch`` does."""
    folder = dest / project.folder
    dest.mkdir(parents=True, exist_ok=True)
    print(f"fetching {project.corpus.requirement} with pip's default options ...")
    with tempfile.TemporaryDirectory(prefix="ipl-untuned-") as tmp:
        tmp_path = Path(tmp)
        downloads = tmp_path / "downloads"
        downloads.mkdir()
        archive = _pip_download(project.corpus.requirement, downloads, [])
        if archive is None:
            raise FetchError(f"could not download {project.corpus.requirement}")
        staging = tmp_path / project.folder
        staging.mkdir()
        unpack(archive, project.package, staging)
        files, lines = measure(staging)
        info = {
            "name": project.name,
            "version": project.version,
            "source": archive.name,
            "files": files,
            "lines": lines,
        }
        (staging / MARKER).write_text(json.dumps(info, indent=2) + "\n")
        if folder.exists():
            shutil.rmtree(folder)
        shutil.move(str(staging), str(folder))


def source_of(project: Project, dest: Path) -> str:
    """The archive the unpacked sources came from (recorded by ``corpora.fetch``), or ``?``."""
    marker = dest / project.folder / ".corpus.json"
    try:
        return str(json.loads(marker.read_text()).get("source", "?"))
    except (OSError, ValueError):
        return "?"


def print_projects(results: Sequence[Result], dest: Path, markdown: bool) -> None:
    """One row per project: version, domain, size, source archive, seconds of the linter call."""
    heads = ["project", "version", "domain", "size", "source", "lint s"]
    rows = [
        [
            r.project.name,
            r.project.version,
            r.project.domain,
            r.project.size,
            source_of(r.project, dest),
            f"{r.seconds:.1f}",
        ]
        for r in results
    ]
    print()
    if markdown:
        print("| " + " | ".join(heads) + " |")
        print("|---|---|---|---|---|---:|")
        for cells in rows:
            cells[4] = f"`{cells[4]}`"
            print("| " + " | ".join(cells) + " |")
        return
    for cells in rows:
        print("  ".join(cells))


def print_findings(
    results: Sequence[Result], verdicts: dict[str, dict[str, str]], markdown: bool
) -> None:
    """One line per finding: its key, the verdict and the reason."""
    for result in results:
        if not result.findings:
            continue
        print(f"\n### {result.project.folder}\n" if markdown else f"\n{result.project.folder}")
        if markdown:
            print("| location | code | verdict | family | reason |")
            print("|---|---|---|---|---|")
        for finding in result.findings:
            key = result.key(finding)
            entry = verdicts.get(key, {"verdict": "open", "reason": str(finding["message"])})
            location, _, code = key.rpartition(":")
            location = location.split("/", 1)[1]
            reason = entry.get("reason", "").replace("|", "\\|")
            family = entry.get("family", "")
            if markdown:
                shown = f"`{family}`" if family else ""
                print(f"| `{location}` | {code} | {entry['verdict']} | {shown} | {reason} |")
            else:
                tag = f" [{family}]" if family else ""
                print(f"  {location} {code} {entry['verdict']}{tag}: {reason}")


def print_families(
    results: Sequence[Result], verdicts: dict[str, dict[str, str]], markdown: bool
) -> None:
    """How many false alarms fall in each family (the verdicts' optional ``family`` field)."""
    families: Counter[str] = Counter()
    for result in results:
        for finding in result.findings:
            entry = verdicts.get(result.key(finding), {})
            if entry.get("verdict") == "false":
                families[entry.get("family", "(no family)")] += 1
    if not families:
        return
    print("\nfalse alarms by family:")
    for family, count in families.most_common():
        print(f"- `{family}`: {count}" if markdown else f"  {count:4d}  {family}")


def print_per_code(
    results: Sequence[Result], verdicts: dict[str, dict[str, str]], markdown: bool
) -> None:
    """One row per code that fired: how many of its findings are real, real-conditional,
    false or still open."""
    tally: dict[str, Counter[str]] = {}
    for result in results:
        for finding in result.findings:
            verdict = verdicts.get(result.key(finding), {}).get("verdict", "open")
            tally.setdefault(str(finding["code"]), Counter())[verdict] += 1
    if not tally:
        return
    heads = ["code", "real", "cond", "false", "open"]
    rows = [
        [
            code,
            str(tally[code]["real"]),
            str(tally[code]["real-conditional"]),
            str(tally[code]["false"]),
            str(tally[code]["open"]),
        ]
        for code in sorted(tally)
    ]
    print()
    print_table(heads, rows, markdown)


def print_project_mean(
    results: Sequence[Result], verdicts: dict[str, dict[str, str]], markdown: bool
) -> None:
    """Precision per project with findings (real / findings, and real plus real-conditional /
    findings), then the unweighted mean of each over those projects."""
    rows: list[tuple[str, int, float, float]] = []
    for result in results:
        if not result.findings:
            continue
        tally = Counter(
            verdicts.get(result.key(f), {}).get("verdict", "open") for f in result.findings
        )
        findings = len(result.findings)
        real, cond = tally["real"], tally["real-conditional"]
        rows.append((result.project.name, findings, real / findings, (real + cond) / findings))
    if not rows:
        return
    heads = ["project", "findings", "precision", "prec+cond"]
    cells = [[name, str(n), f"{100 * p:.0f}%", f"{100 * q:.0f}%"] for name, n, p, q in rows]
    mean_p = sum(r[2] for r in rows) / len(rows)
    mean_q = sum(r[3] for r in rows) / len(rows)
    cells.append(
        [f"mean over {len(rows)} projects", "", f"{100 * mean_p:.1f}%", f"{100 * mean_q:.1f}%"]
    )
    print()
    print_table(heads, cells, markdown)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--projects", type=Path, default=DEFAULT_PROJECTS, help="the pinned projects (JSON)"
    )
    parser.add_argument(
        "--dest", type=Path, default=DEFAULT_DEST, help="where to unpack (bench/.untuned)"
    )
    parser.add_argument(
        "--python", default=str(DEFAULT_PYTHON), help="interpreter that has inplace_lint"
    )
    parser.add_argument("--jobs", type=int, default=2, help="linter processes (default 2)")
    parser.add_argument(
        "--linter",
        type=Path,
        help="run the linter of this checkout (imported from it alone, run in it) instead of "
        "this repository's",
    )
    parser.add_argument("--only", action="append", metavar="NAME", help="just this project")
    parser.add_argument(
        "--assume-grad",
        action="store_true",
        help="lint with --assume-grad; findings are saved (and read with --saved) as "
        "findings-<name>-assume-grad.json",
    )
    parser.add_argument(
        "--saved", action="store_true", help="do not lint: use the findings a run saved"
    )
    parser.add_argument("--verdicts", type=Path, help="verdicts file: add precision columns")
    parser.add_argument(
        "--list", action="store_true", help="also list every finding (with its verdict)"
    )
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument(
        "--projects-table",
        action="store_true",
        help="also print the projects: version, domain, size, source archive, lint seconds",
    )
    parser.add_argument(
        "--per-code",
        action="store_true",
        help="with --verdicts: also print real / real-conditional / false per code",
    )
    parser.add_argument(
        "--project-mean",
        action="store_true",
        help="with --verdicts: also print each project's precision and their mean over the "
        "projects that have findings",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    projects = [p for p in load_projects(args.projects) if not args.only or p.name in args.only]
    if not projects:
        print("error: no matching project", file=sys.stderr)
        return 2
    verdicts = load_verdicts(args.verdicts) if args.verdicts else None
    results: list[Result] = []
    runs: set[str] = set()
    failed: list[str] = []
    linter = args.linter.resolve() if args.linter else None
    commit = linter_commit(linter or ROOT)
    extra = ["--assume-grad"] if args.assume_grad else []
    tag = "-assume-grad" if args.assume_grad else ""
    for project in projects:
        if args.saved:
            result, run = load_saved(project, args.dest, tag)
            runs.add(run)
            results.append(result)
            continue
        try:
            try:
                fetch(project.corpus, args.dest)
            except FetchError:
                fetch_default(project, args.dest)
        except (FetchError, OSError, zipfile.BadZipFile, tarfile.TarError) as err:
            print(f"error: {project.folder}: {err}", file=sys.stderr)
            failed.append(project.name)
            continue
        print(f"linting {project.folder} ...", flush=True)
        result = check_project(project, args.dest, args.python, args.jobs, linter, extra)
        save(result, args.dest, commit, linter, tag)
        results.append(result)
    print()
    if args.saved:
        print(f"saved findings of the run at linter commit {', '.join(sorted(runs))}")
    else:
        print(f"linter commit {commit}, {time.strftime('%Y-%m-%d')}")
    print()
    heads, rows = table_rows(results, verdicts)
    print_table(heads, rows, args.markdown)
    for result in results:
        for error in result.errors:
            print(f"{result.project.folder}: stderr: {error}")
        for crash in result.crashes:
            print(f"{result.project.folder}: CRASH: {crash}")
    if args.projects_table:
        print_projects(results, args.dest, args.markdown)
    if verdicts is not None and args.per_code:
        print_per_code(results, verdicts, args.markdown)
    if verdicts is not None and args.project_mean:
        print_project_mean(results, verdicts, args.markdown)
    if verdicts is not None:
        print_families(results, verdicts, args.markdown)
    if args.list:
        print_findings(results, verdicts or {}, args.markdown)
    if failed:
        print(f"failed to fetch: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

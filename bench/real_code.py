"""Run inplace-lint over the real-world corpora and tabulate what it finds.

For every corpus that ``bench/corpora.py`` unpacked under ``bench/.corpora/<name>-<version>/``
this runs the linter exactly as a user would, with the default rule set::

    python -m inplace_lint check --isolated --exit-zero --no-cache bench/.corpora/<name>-<version>

(``--no-cache``: the seconds are a cold run's, and the corpora leave no cache in the
repository) and records the number of ``.py`` files, the wall-clock seconds, and the number of
findings per code. The raw findings are written to ``bench/.corpora/findings-<name>.txt`` (one
finding a line; a message that spans lines is kept as printed) and a small JSON summary next to
them, so that a later run can be compared with an earlier one.

If the linter stops with an internal error (it then prints no findings at all), the corpus is
bisected over explicit file lists until every crashing file is isolated; the crashes are listed
and the findings from all other files are kept.

Usage::

    .venv/bin/python bench/real_code.py                     # every corpus
    .venv/bin/python bench/real_code.py --only torchvision  # just one (repeatable)
    .venv/bin/python bench/real_code.py --compare           # also show the previous counts
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DEFAULT_DEST = BENCH / ".corpora"

#: The codes the linter enables by default; the table has one column for each, in this order.
CODES = ("IPL001", "IPL002", "IPL003", "IPL004", "IPL005", "IPL006", "IPL007", "IPL999")

#: A finding's first line: ``path:line:col: CODE message``.
FINDING = re.compile(r"^(?P<path>.+?\.py):(?P<line>\d+):(?P<col>\d+): (?P<code>IPL\d{3}) ")

#: What the CLI prints on stderr when an exception escapes the analysis.
INTERNAL = "internal error"


@dataclass
class Run:
    """What one linter invocation printed."""

    findings: list[str]
    errors: list[str]
    internal: bool
    seconds: float


@dataclass
class Result:
    """Everything recorded for one corpus."""

    name: str
    folder: str
    files: int
    seconds: float = 0.0
    findings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)

    def counts(self) -> Counter[str]:
        """Findings per code."""
        counter: Counter[str] = Counter()
        for finding in self.findings:
            match = FINDING.match(finding)
            if match is not None:
                counter[match.group("code")] += 1
        return counter

    def summary(self) -> dict[str, object]:
        """The JSON-friendly record written next to the findings file."""
        return {
            "corpus": self.folder,
            "files": self.files,
            "seconds": round(self.seconds, 1),
            "findings": len(self.findings),
            "counts": dict(sorted(self.counts().items())),
            "errors": self.errors,
            "crashes": self.crashes,
            "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        }


def split_findings(stdout: str) -> list[str]:
    """Group the linter's stdout into findings; continuation lines join the finding above."""
    findings: list[str] = []
    for line in stdout.splitlines():
        if FINDING.match(line) or not findings:
            findings.append(line)
        else:
            findings[-1] += "\n" + line
    return [f for f in findings if FINDING.match(f)]


def lint(targets: Sequence[str], python: str) -> Run:
    """Run the linter once over ``targets`` (a folder or explicit files) from the repo root."""
    command = [
        python,
        "-m",
        "inplace_lint",
        "check",
        "--isolated",
        "--exit-zero",
        "--no-cache",
        *targets,
    ]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    internal = any(INTERNAL in line for line in errors)
    return Run(split_findings(done.stdout), errors, internal, seconds)


def bisect(files: Sequence[str], python: str, result: Result) -> None:
    """Lint ``files``; on an internal error split them until each crashing file is alone."""
    run = lint(files, python)
    if not run.internal:
        result.findings.extend(run.findings)
        result.errors.extend(run.errors)
        return
    if len(files) == 1:
        message = next(line for line in run.errors if INTERNAL in line)
        result.crashes.append(f"{files[0]}: {message}")
        return
    middle = len(files) // 2
    bisect(files[:middle], python, result)
    bisect(files[middle:], python, result)


def check_corpus(folder: Path, python: str) -> Result:
    """Lint one corpus folder and collect its findings, errors and crashes."""
    name = folder.name.rsplit("-", 1)[0]
    shown = folder.relative_to(ROOT).as_posix() if folder.is_relative_to(ROOT) else str(folder)
    files = sorted(p.relative_to(ROOT).as_posix() for p in folder.rglob("*.py"))
    result = Result(name=name, folder=folder.name, files=len(files))
    run = lint([shown], python)
    result.seconds = run.seconds
    if run.internal:
        print(f"  {folder.name}: internal error, bisecting over {len(files)} files ...")
        bisect(files, python, result)
        result.findings.sort(key=_finding_key)
    else:
        result.findings = run.findings
        result.errors = run.errors
    return result


def _finding_key(finding: str) -> tuple[str, int, int, str]:
    match = FINDING.match(finding)
    if match is None:
        return (finding, 0, 0, "")
    return (match["path"], int(match["line"]), int(match["col"]), match["code"])


def write(result: Result, dest: Path) -> dict[str, object] | None:
    """Write findings and summary; return the summary the previous run left, if any."""
    summary_path = dest / f"summary-{result.name}.json"
    previous = None
    if summary_path.is_file():
        previous = json.loads(summary_path.read_text())
        summary_path.replace(dest / f"summary-{result.name}.prev.json")
    findings_path = dest / f"findings-{result.name}.txt"
    if findings_path.is_file():
        findings_path.replace(dest / f"findings-{result.name}.prev.txt")
    findings_path.write_text("".join(f + "\n" for f in result.findings))
    summary_path.write_text(json.dumps(result.summary(), indent=2) + "\n")
    return previous


#: Column titles and widths of the table; the first column is left-aligned.
HEADS = ("corpus", "files", "seconds", *CODES, "total")
WIDTHS = (24, 6, 8, *[7] * len(CODES), 6)


def row(cells: Sequence[str]) -> str:
    """One table line: the first cell left-aligned, the rest right-aligned."""
    out = [cells[0].ljust(WIDTHS[0])]
    out.extend(cell.rjust(width) for cell, width in zip(cells[1:], WIDTHS[1:], strict=True))
    return " ".join(out)


def print_table(results: Sequence[Result], previous: dict[str, dict[str, object] | None]) -> None:
    """One row per corpus (and the previous counts when asked for), then a total row."""
    print(row(HEADS))
    total: Counter[str] = Counter()
    for result in results:
        counts = result.counts()
        total.update(counts)
        print(
            row(
                [
                    result.folder,
                    str(result.files),
                    f"{result.seconds:.1f}",
                    *[str(counts.get(code, 0)) for code in CODES],
                    str(len(result.findings)),
                ]
            )
        )
        before = previous.get(result.name)
        if before is not None:
            old = before.get("counts", {})
            assert isinstance(old, dict)
            print(
                row(
                    [
                        f"  before ({str(before.get('when', '?'))[:16]})",
                        str(before.get("files", "")),
                        f"{before.get('seconds', 0)}",
                        *[str(old.get(code, 0)) for code in CODES],
                        str(before.get("findings", 0)),
                    ]
                )
            )
    print(
        row(
            [
                "total",
                str(sum(r.files for r in results)),
                f"{sum(r.seconds for r in results):.1f}",
                *[str(total.get(code, 0)) for code in CODES],
                str(sum(len(r.findings) for r in results)),
            ]
        )
    )
    for result in results:
        for error in result.errors:
            print(f"{result.folder}: stderr: {error}")
        for crash in result.crashes:
            print(f"{result.folder}: CRASH: {crash}")


def corpus_folders(dest: Path, only: Sequence[str] | None) -> list[Path]:
    """The unpacked corpus folders under ``dest``, optionally limited to the ``only`` names."""
    folders = sorted(p for p in dest.iterdir() if p.is_dir() and (p / ".corpus.json").is_file())
    if only:
        folders = [p for p in folders if p.name.rsplit("-", 1)[0] in only]
    return folders


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--only", action="append", metavar="NAME", help="just this corpus (repeatable)"
    )
    parser.add_argument(
        "--dest", type=Path, default=DEFAULT_DEST, help="corpus folder (default: bench/.corpora)"
    )
    parser.add_argument(
        "--python", default=sys.executable, help="interpreter that has inplace_lint installed"
    )
    parser.add_argument(
        "--compare", action="store_true", help="print the previous run's counts under each row"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.dest.is_dir():
        print(f"error: no corpora in {args.dest}; run python bench/corpora.py", file=sys.stderr)
        return 1
    folders = corpus_folders(args.dest, args.only)
    if not folders:
        print("error: no matching corpus; run python bench/corpora.py", file=sys.stderr)
        return 1
    results: list[Result] = []
    previous: dict[str, dict[str, object] | None] = {}
    for folder in folders:
        print(f"linting {folder.name} ...", flush=True)
        result = check_corpus(folder, args.python)
        before = write(result, args.dest)
        previous[result.name] = before if args.compare else None
        results.append(result)
    print()
    print_table(results, previous)
    return 1 if any(r.crashes for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

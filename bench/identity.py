"""Prove a refactoring changed no behaviour: every output, before and after, byte for byte.

Runs the command line of two builds of inplace-lint over the same inputs (every case file in
``tests/cases``, ``examples/`` and the four corpora of ``bench/corpora.py``) in every output
format, plus ``--diff`` and ``--diff --unsafe-fixes`` (the fixes) and the opt-in rule, and
compares the outputs::

    python bench/identity.py check --base c8e0325        # HEAD's working tree against c8e0325
    python bench/identity.py run --out /tmp/after         # one build's outputs into a folder
    python bench/identity.py run --out /tmp/before --tree /tmp/base-checkout
    python bench/identity.py compare /tmp/before /tmp/after [--common]

``--tree`` names a checkout whose ``inplace_lint`` package is put first on ``PYTHONPATH``; the
inputs always come from this checkout, so only the package differs. ``check --base REV`` makes
that checkout with ``git worktree`` in a temporary folder and removes it afterwards. Corpora that
are not fetched are skipped with a note (``--no-corpora`` skips them all). Each run uses a fresh
cache folder, so every format after the first reads the findings the first one stored: the
cache is part of what is compared. Exit status: 0 identical, 1 different, 2 bad usage.
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "bench" / ".corpora"
FORMATS = ("text", "json", "sarif", "github", "lsp")
#: Extra runs beside the formats: the safe fixes and the unsafe ones, as diffs, and the
#: opt-in rule (IPL008), which the default selection leaves out.
EXTRA_RUNS = {
    "diff": ["--diff"],
    "unsafe-diff": ["--diff", "--unsafe-fixes"],
    "opt-in": ["--format", "json", "--extend-select", "IPL008"],
}


def _inputs(with_corpora: bool) -> dict[str, list[str]]:
    """Input sets by name, as paths relative to the repository root."""
    sets = {"cases": ["tests/cases"], "examples": ["examples"]}
    if with_corpora:
        for folder in sorted(CORPORA.glob("*-*")):
            if (folder / ".corpus.json").is_file():
                sets[folder.name] = [folder.relative_to(ROOT).as_posix()]
        if len(sets) == 2:
            print("note: no corpora fetched (python bench/corpora.py); comparing without them")
    return sets


def _lint(tree: Path | None, args: list[str], cache: Path) -> bytes:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        )
    command = [sys.executable, "-P", "-m", "inplace_lint", "check", "--isolated", "--exit-zero"]
    command += ["--cache-dir", str(cache), *args]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=False)
    return (
        done.stdout + b"\n--- stderr ---\n" + done.stderr + f"\n--- exit {done.returncode}".encode()
    )


def run(out: Path, tree: Path | None, with_corpora: bool) -> None:
    """Write one output file per (input set, format or fix run) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="identity-cache-") as cache:
        for name, paths in _inputs(with_corpora).items():
            runs = {fmt: ["--format", fmt] for fmt in FORMATS} | EXTRA_RUNS
            for label, extra in runs.items():
                (out / f"{name}.{label}").write_bytes(_lint(tree, [*extra, *paths], Path(cache)))
                print(f"{name:>22} {label:<12} done", flush=True)


def compare(before: Path, after: Path, common: bool = False) -> int:
    """Print every output that differs (with the first lines of its diff); 1 if any does.
    With ``common``, outputs present in only one folder are left out (a quick run that
    skipped the corpora against a full baseline)."""
    old_names, new_names = {p.name for p in before.iterdir()}, {p.name for p in after.iterdir()}
    names = sorted(old_names & new_names if common else old_names | new_names)
    differing = 0
    for name in names:
        old, new = before / name, after / name
        if old.is_file() and new.is_file() and old.read_bytes() == new.read_bytes():
            continue
        differing += 1
        print(f"DIFFERS {name}")
        if old.is_file() and new.is_file():
            lines = difflib.unified_diff(
                old.read_text(errors="replace").splitlines(),
                new.read_text(errors="replace").splitlines(),
                "before",
                "after",
                lineterm="",
            )
            for line in list(lines)[:20]:
                print(f"    {line}")
    print(f"{len(names) - differing} of {len(names)} outputs identical")
    return 1 if differing else 0


def check(base: str, with_corpora: bool) -> int:
    """Outputs of revision ``base`` against this working tree's."""
    with tempfile.TemporaryDirectory(prefix="identity-") as work:
        tree = Path(work) / "base"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(tree), base],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            run(Path(work) / "before", tree, with_corpora)
            run(Path(work) / "after", None, with_corpora)
            return compare(Path(work) / "before", Path(work) / "after")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    one = sub.add_parser("run", help="write one build's outputs into a folder")
    one.add_argument("--out", type=Path, required=True)
    one.add_argument("--tree", type=Path, help="a checkout whose package to run")
    both = sub.add_parser("compare", help="compare two folders of outputs")
    both.add_argument("before", type=Path)
    both.add_argument("after", type=Path)
    both.add_argument("--common", action="store_true", help="only outputs both folders have")
    base = sub.add_parser("check", help="a revision's outputs against the working tree's")
    base.add_argument("--base", required=True, help="the revision to compare against")
    for each in (one, base):
        each.add_argument("--no-corpora", action="store_true", help="cases and examples only")
    args = parser.parse_args(argv)
    if args.step == "compare":
        return compare(args.before, args.after, args.common)
    if args.step == "run":
        run(args.out, args.tree, not args.no_corpora)
        return 0
    return check(args.base, not args.no_corpora)


if __name__ == "__main__":
    raise SystemExit(main())

"""Fix rates by rule code: how many hazard cases ``fix_text`` repairs, checked with torch.

For each hazard case (``# label: hazard ...`` with ``# <-- IPL00N`` markers) under the given
folders, the case is fixed in memory (safe fixes, then safe and unsafe), and counted
*repaired* when no finding remains, the fixed program runs, and (for cases with a twin) it
computes what the out-of-place twin of the marked lines computes. Rates are printed per
code of the case's markers and in total. It imports the ``inplace_lint`` found on
``sys.path``, so ``PYTHONPATH=/old/tree python -P bench/fix_new_rates.py`` measures an older
build. Helper for issue 17's new fixes; ``bench/fix_roundtrip.py`` is the round-trip harness.

    python bench/fix_new_rates.py tests/cases bench/rounds/round6
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))

from harness import compare, markdown_examples, run_example  # noqa: E402

from inplace_lint.autofix import fix_text  # noqa: E402
from inplace_lint.dynamic.twin import out_of_place_twin  # noqa: E402

TOLERANCE = 1e-5


def _examples(folder: Path) -> list:
    found = []
    paths = sorted(folder.rglob("*.py")) if folder.is_dir() else [folder]
    for path in paths:
        source = path.read_text(encoding="utf-8")
        first = source.splitlines()[0] if source else ""
        if not first.startswith("# label:"):
            continue
        words = first.split(":", 1)[1].split()
        block = f"```python {' '.join(words)}\n{source}```\n"
        try:
            (example,) = markdown_examples(block, str(path))
        except ValueError:
            continue
        found.append(example)
    return found


def repaired(example, unsafe: bool, twins: dict) -> bool:
    result = fix_text(example.source, example.origin, unsafe=unsafe)
    if not result.applied or result.remaining:
        return False
    outcome = run_example(result.after, example.origin)
    if not outcome.ok:
        return False
    if not example.twin:
        return True
    if example.origin not in twins:
        twin = out_of_place_twin(example.source, lines=example.marked_lines)
        twins[example.origin] = run_example(twin, "twin")
    difference = compare(outcome, twins[example.origin])
    return difference is not None and difference <= TOLERANCE


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    args = parser.parse_args()
    cases = [e for f in args.folders for e in _examples(f) if e.label == "hazard"]
    totals: Counter[str] = Counter()
    safe: Counter[str] = Counter()
    unsafe: Counter[str] = Counter()
    twins: dict = {}
    for example in cases:
        codes = sorted({code for _, code in example.expected})
        key = "+".join(codes)
        ok_safe = repaired(example, False, twins)
        ok_unsafe = ok_safe or repaired(example, True, twins)
        for code in codes:
            totals[code] += 1
            safe[code] += ok_safe
            unsafe[code] += ok_unsafe
        totals["all"] += 1
        safe["all"] += ok_safe
        unsafe["all"] += ok_unsafe
        if args.verbose:
            print(f"{int(ok_safe)} {int(ok_unsafe)} {key} {example.origin}", flush=True)
    print(f"{'code':6} {'cases':>5} {'--fix':>12} {'--unsafe-fixes':>16}")
    for code in sorted(totals):
        n = totals[code]
        print(
            f"{code:6} {n:5} {safe[code]:5} ({safe[code] / n:4.0%})"
            f" {unsafe[code]:8} ({unsafe[code] / n:4.0%})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

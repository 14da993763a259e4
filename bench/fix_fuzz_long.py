"""A long, randomised run of tests/test_fix_fuzz.py: every offered fix on generated programs.

The test suite runs a few derandomised examples; this runs ``--scale`` times as many, fresh
random programs every time, and stops at the first failure, which hypothesis prints shrunk::

    .venv/bin/python bench/fix_fuzz_long.py              # 100x the suite's examples
    .venv/bin/python bench/fix_fuzz_long.py --scale 20
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=100, help="examples per suite example")
    args = parser.parse_args(argv)
    env = dict(os.environ, INPLACE_LINT_FUZZ_SCALE=str(max(1, args.scale)))
    env["INPLACE_LINT_FUZZ_RANDOM"] = "1"
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-n", "0"]
    command += ["tests/test_fix_fuzz.py", "--hypothesis-show-statistics"]
    return subprocess.call(command, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())

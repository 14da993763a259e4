"""A long, randomised run of the fuzz tests in tests/test_fuzz.py.

CI runs those tests with a few derandomised examples each. This runs the same tests with
``--scale`` times as many examples, fresh random inputs every time (and libcst-node-generated
Python as well as the grammar), and stops at the first failure, which hypothesis prints
shrunk to a minimal input::

    .venv/bin/python bench/fuzz_long.py              # about 100x the CI examples
    .venv/bin/python bench/fuzz_long.py --scale 20 -k engine
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
    parser.add_argument("--scale", type=int, default=100, help="examples per CI example")
    parser.add_argument("-k", dest="keyword", help="only tests matching this pytest -k expression")
    args = parser.parse_args(argv)
    env = dict(os.environ, INPLACE_LINT_FUZZ_SCALE=str(max(1, args.scale)))
    env["INPLACE_LINT_FUZZ_RANDOM"] = "1"
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    command += ["tests/test_fuzz.py", "--hypothesis-show-statistics"]
    if args.keyword:
        command += ["-k", args.keyword]
    return subprocess.call(command, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())

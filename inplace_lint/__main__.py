"""Allow ``python -m inplace_lint``."""

import sys

from inplace_lint.cli import main

sys.exit(main())

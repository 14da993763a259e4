"""``python -m inplace_lint.lsp`` starts the language server."""

import sys

from inplace_lint.lsp import main

sys.exit(main(sys.argv[1:]))

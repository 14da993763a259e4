"""``inplace-lint lsp``: the language server (needs the ``lsp`` extra: pygls and lsprotocol)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] = ()) -> int:
    """Serve the Language Server Protocol over stdin/stdout; 2 if pygls is missing."""
    if argv:
        print(f"inplace-lint: error: 'lsp' takes no arguments, got {argv[0]!r}", file=sys.stderr)
        return 2
    try:
        from inplace_lint.lsp.server import serve
    except ImportError as exc:
        print(
            f"inplace-lint: error: the language server needs pygls and lsprotocol ({exc}); "
            "install them with: pip install 'inplace-lint[lsp]'",
            file=sys.stderr,
        )
        return 2
    serve()
    return 0

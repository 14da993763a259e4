"""``inplace-lint lsp``: the language server (needs the ``lsp`` extra: pygls and lsprotocol)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = """\
usage: python -m inplace_lint.lsp

Serve the Language Server Protocol over stdin/stdout (the same as `inplace-lint lsp`):
diagnostics as you type, quick fixes, hover. An editor starts it; client set-ups for VS Code,
Neovim, Helix and Emacs are in docs/editors.md."""


def main(argv: Sequence[str] = ()) -> int:
    """Serve the Language Server Protocol over stdin/stdout; 2 if pygls is missing."""
    if list(argv) in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if argv:
        print(f"inplace-lint: error: 'lsp' takes no arguments, got {argv[0]!r}", file=sys.stderr)
        return 2
    try:
        from inplace_lint.lsp.server import serve
    except ImportError as exc:
        print(
            f"inplace-lint: error: the language server needs pygls and lsprotocol ({exc}); "
            "install the lsp extra from the clone: pip install '.[lsp]'",
            file=sys.stderr,
        )
        return 2
    serve()
    return 0

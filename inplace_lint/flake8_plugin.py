"""The flake8 plugin: ``flake8 --select IPL`` reports what ``inplace-lint`` reports.

flake8 owns the configuration here: its ``--select``/``--extend-select``/``--ignore``,
``--per-file-ignores`` and ``# noqa`` decide what is shown, and ``[tool.inplace-lint]`` is not
read. The opt-in rules (IPL008) run only when flake8's ``--select`` or ``--extend-select``
names them by their full code, as on the command line.

The plugin works on flake8's decoded lines and its ``ast`` tree (which stands in for the
engine's syntax screen), so the file is read once and parsed once by libcst. Our own
statement-wide ``# noqa`` filter runs too, so a comment on any line of a multi-line statement
silences a finding exactly as on the command line; ``--disable-noqa`` turns both filters off.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator, Sequence
from typing import Any

from inplace_lint import __version__
from inplace_lint.checks import PARSE_ERROR, all_rules
from inplace_lint.engine import lint_source


class InplaceLintChecker:
    """A flake8 ``tree`` plugin for the ``IPL`` codes."""

    name = "inplace-lint"
    version = __version__
    #: Set from flake8's options: the opt-in codes named explicitly, and whether noqa applies.
    opt_in: frozenset[str] = frozenset()
    noqa: bool = True

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str) -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def parse_options(
        cls, option_manager: Any, options: argparse.Namespace, filenames: Sequence[str]
    ) -> None:
        """Read flake8's own ``--select``, ``--extend-select`` and ``--disable-noqa``."""
        named: set[str] = set()
        for option in ("select", "extend_select"):
            named.update(code.strip().upper() for code in getattr(options, option, None) or ())
        cls.opt_in = frozenset(r.code for r in all_rules() if not r.default and r.code in named)
        cls.noqa = not getattr(options, "disable_noqa", False)

    def run(self) -> Iterator[tuple[int, int, str, type[InplaceLintChecker]]]:
        """``(line, column - 1, "CODE message", type)``: flake8 adds 1 to the column."""
        codes = {r.code for r in all_rules() if r.default} | self.opt_in | {PARSE_ERROR}
        text = "".join(self.lines)
        for finding in lint_source(
            text, self.filename, codes, tree=self.tree, noqa=self.noqa, fixes=False
        ):
            yield (
                finding.line,
                finding.column - 1,
                f"{finding.code} {finding.message}",
                type(self),
            )

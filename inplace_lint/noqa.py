"""``# noqa`` and ``# noqa: IPL001,IPL002`` comments."""

from __future__ import annotations

import io
import re
import tokenize

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)

#: line -> None for a bare ``# noqa`` (everything) or the set of codes it names
NoqaMap = dict[int, frozenset[str] | None]


def noqa_map(text: str) -> NoqaMap:
    """Find every noqa comment. Only real comments count, not text inside strings."""
    found: NoqaMap = {}
    if "noqa" not in text.lower():
        return found  # the common case, without tokenizing the file
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        tokens = []
        for number, line in enumerate(text.splitlines(), start=1):
            if "#" in line:
                _add(found, number, line[line.index("#") :])
        return found
    for token in tokens:
        if token.type == tokenize.COMMENT:
            _add(found, token.start[0], token.string)
    return found


def _add(found: NoqaMap, line: int, comment: str) -> None:
    match = _NOQA.search(comment)
    if match is None:
        return
    codes = match.group("codes")
    if codes is None:
        found[line] = None
    else:
        found[line] = frozenset(c.upper() for c in re.split(r"[,\s]+", codes) if c)


def suppressed(noqa: NoqaMap, code: str, lines: range) -> bool:
    """True when a noqa comment on any of ``lines`` covers ``code``."""
    for line in lines:
        if line in noqa:
            codes = noqa[line]
            if codes is None or code in codes:
                return True
    return False

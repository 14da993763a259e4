"""Pure helpers for the language server's code actions (no pygls needed)."""

from __future__ import annotations

import io
import re
import tokenize

from inplace_lint.finding import Edit, Finding, Position

#: The code list of a noqa comment that names codes (the syntax ``inplace_lint.noqa`` reads).
_NOQA_CODES = re.compile(r"#\s*noqa:\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)", re.I)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines as LSP and Python number them: only ``\\n``, ``\\r\\n`` and ``\\r`` end a line."""
    return _LINE_BREAK.split(text)


def noqa_edit(text: str, finding: Finding) -> Edit:
    """The edit that silences ``finding`` with ``# noqa: CODE``.

    An existing ``# noqa: ...`` list on the finding's statement gets the code appended;
    otherwise the comment goes at the end of the finding's line, or at the end of its
    statement when that line ends inside a string or with a backslash continuation.
    """
    lines = split_lines(text)
    first, last = finding.statement_lines or (finding.line, finding.line)
    first, last = min(first, finding.line), max(last, finding.line)
    comments, line_ends = _comments_and_line_ends(text)
    order = [finding.line, *(n for n in range(first, last + 1) if n != finding.line)]
    for number in order:
        if number not in comments:
            continue
        column, comment = comments[number]
        match = _NOQA_CODES.search(comment)
        if match is not None:
            at = Position(number, column + match.end("codes") + 1)
            return Edit(at, at, f",{finding.code}")
    target = finding.line
    if line_ends is not None and target not in line_ends:
        target = max((n for n in line_ends if first <= n <= last), default=last)
    line = lines[target - 1] if 0 < target <= len(lines) else ""
    content = len(line.rstrip(" \t\f"))
    return Edit(
        Position(target, content + 1),
        Position(target, len(line) + 1),
        f"  # noqa: {finding.code}",
    )


def _comments_and_line_ends(text: str) -> tuple[dict[int, tuple[int, str]], set[int] | None]:
    """Comments by line (0-based column, text) and the lines whose end may take a comment.

    The second item is None when the text does not tokenize.
    """
    comments: dict[int, tuple[int, str]] = {}
    ends: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = (token.start[1], token.string)
            elif token.type in (tokenize.NEWLINE, tokenize.NL):
                ends.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        return comments, None
    return comments, ends

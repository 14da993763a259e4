"""A cheap text test that keeps files that cannot hold a hazard away from the parser.

Every rule reports at a write: an in-place method or function (``x.relu_()``), an augmented or
subscript assignment, an in-place module or ``inplace``/positional ``True`` argument, ``out=``,
a rebinding of ``.data`` or ``optimizer.step()``; a rule that reports elsewhere (the opt-in
IPL008 at ``clamp``/``clip``) names its words in ``Rule.screen_words``. A file with ``torch``
and none of these is never parsed. The patterns are
searched one by one, each from a literal where possible, because one alternation of them all
was several times slower. The test errs towards passing a file: comments and strings count.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache

from inplace_lint.checks import all_rules

#: Augmented assignments (``**=`` and ``//=`` end in ``*=`` and ``/=``).
_AUGMENTED = ("+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "<<=", ">>=")
#: ``name_(`` for an in-place method or function; the character before ``_`` is checked apart.
_TRAILING_UNDERSCORE_CALL = re.compile(r"_\s*\(")
#: ``.data = ...``, ``opt.step(``.
_OTHER_WRITES = re.compile(r"\.data\s*=(?!=)|\.step\s*\(")
#: ``out=`` as a keyword argument (not ``dropout=`` nor ``out = ...``); checked as for True.
_OUT = re.compile(r"out\s*=(?!=)")
#: ``True`` as a positional argument, as in ``nn.ReLU(True)``; what precedes is checked apart.
_TRUE_ARG = re.compile(r"True\s*[,)]")
#: ``x[i] = ...``; annotation defaults such as ``a: Optional[int] = None`` are told apart.
_SUBSCRIPT = re.compile(r"\]\s*=(?!=)")
_ANNOTATED = re.compile(r"[ \t]*(?!(?:else|try|finally)\b)[A-Za-z_]\w*[ \t]*:[\w. \t\[\],|'\"]*\Z")
#: What may precede a keyword or positional argument (after blanks).
_ARGUMENT_START = "(,"


def may_contain_hazard(text: str, codes: Iterable[str] | None = None) -> bool:
    """False only when the file certainly cannot produce a finding for ``codes`` (default: any)."""
    if "torch" not in text:
        return False
    if "inplace" in text or any(op in text for op in _AUGMENTED):
        return True
    if _OTHER_WRITES.search(text) or _subscript_write(text):
        return True
    if _follows(text, _TRAILING_UNDERSCORE_CALL, str.isalnum, skip_blanks=False):
        return True
    if _follows(text, _OUT, _ARGUMENT_START.__contains__, skip_blanks=True):
        return True
    if _follows(text, _TRUE_ARG, _ARGUMENT_START.__contains__, skip_blanks=True):
        return True
    words = _rule_words(None if codes is None else frozenset(codes))
    return any(word in text for word in words)


@cache
def _rule_words(codes: frozenset[str] | None) -> tuple[str, ...]:
    """The screen words of the rules in ``codes`` (default: every rule)."""
    rules = [r for r in all_rules() if codes is None or r.code in codes]
    return tuple(dict.fromkeys(word for rule in rules for word in rule.screen_words))


def _follows(
    text: str, pattern: re.Pattern[str], accept: Callable[[str], bool], *, skip_blanks: bool
) -> bool:
    """Whether some match of ``pattern`` comes right after a character that ``accept`` takes.

    With ``skip_blanks`` the character looked at is the last one before the match that is not
    blank (nor a line continuation): ``f(x,\n  True)`` has ``,`` before ``True``.
    """
    for match in pattern.finditer(text):
        index = match.start() - 1
        if skip_blanks:
            while index >= 0 and text[index] in " \t\r\n\\":
                index -= 1
        if index >= 0 and accept(text[index]):
            return True
    return False


def _subscript_write(text: str) -> bool:
    """A ``]`` followed by ``=`` that is not the default of an annotated name."""
    for match in _SUBSCRIPT.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if not _ANNOTATED.match(text, start, match.start()):
            return True
    return False

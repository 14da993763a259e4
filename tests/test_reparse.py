"""Statement reuse between parses: the assembled module must equal libcst's own parse.

The hypothesis runs are derandomised (the same examples every run, as in test_fuzz.py); set
``INPLACE_LINT_FUZZ_RANDOM=1`` to draw new ones.
"""

from __future__ import annotations

import ast
import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from inplace_lint.engine import lint_source
from inplace_lint.reparse import StatementReuse

ROOT = Path(__file__).resolve().parent.parent
#: the engine's code and the examples, and one ``tests/cases`` file in four (some 650 short
#: scripts of one style): the same ones as test_from_ast.py, whose libcst parses they share
SOURCES = sorted(
    [
        *(ROOT / "examples").glob("*.py"),
        *sorted((ROOT / "tests" / "cases").rglob("*.py"))[::4],
        *(ROOT / "inplace_lint").rglob("*.py"),
    ]
)


#: Derandomised unless asked: a run that fails fails again, in CI and here.
RANDOM = os.environ.get("INPLACE_LINT_FUZZ_RANDOM") == "1"
SETTINGS = {
    "deadline": None,
    "database": None,
    "derandomize": not RANDOM,
    "suppress_health_check": [HealthCheck.too_slow],
}


def _check(reuse: StatementReuse, text: str, whole: cst.Module | None = None) -> cst.Module:
    """``reuse``'s parse of ``text`` is libcst's (``whole``, when the caller has it)."""
    module = reuse.parse(text, ast.parse(text))
    assert module.code == text
    assert module.deep_equals(whole if whole is not None else cst.parse_module(text))
    return module


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_source_file_is_put_back_together_exactly(
    path: Path, libcst_parse: Callable[[Path], tuple[str, cst.Module]]
) -> None:
    """libcst's parse of each file is shared with test_from_ast.py (tests/conftest.py)."""
    text, whole = libcst_parse(path)
    _check(StatementReuse(), text, whole)


TRICKY = {
    "indented comment after a block": "def f():\n    x = 1\n    # still f's\n\ny = 2\n",
    "two indents": "def f():\n  return 1\n\n\ndef g():\n    return 2\n",
    "tabs": "def f():\n\treturn 1\n\n\ndef g():\n\treturn 2\n",
    "crlf": "import torch\r\n\r\ndef f(x):\r\n    x.relu_()\r\n\r\ny = 2\r\n",
    "mixed newlines": "a = 1\r\nb = 2\ndef f():\n    pass\n",
    "semicolons": "a = 1; b = 2\nc = 3\n",
    "decorators and comments": "# head\n\n@dec\n# between\n@dec2\ndef f():\n    pass\n\n# foot\n",
    "no trailing newline": "a = 1\n\ndef f():\n    return a",
    "only one statement": "x = 1\n",
    "compound at top level": "if a:\n    b = 1\nelse:\n    b = 2\ntry:\n    c\nexcept E:\n    d\n",
    "indented blank line after a block": "def f():\n    x = 1\n    \n\ny = 2\n",
    "one-line bodies": "def f(): return 1\nclass A: pass\nif x: y = 1\n",
    "docstring and blank header": '\n\n"""doc"""\n\n\nimport torch\n',
    "continuation": "x = (1,\n     2)\ny = 1 + \\\n    2\n",
    "form feed": "a = 1\n\x0c\ndef f():\n    pass\n",
    "form feed before a comment after a block": "def f():\n    x = 1\n\x0c# c\ny = 2\n",
    "form feed and an indented comment": "def f():\n    x = 1\n\x0c    # c\ny = 2\n",
}


@pytest.mark.parametrize("text", TRICKY.values(), ids=TRICKY.keys())
def test_tricky_layouts_are_put_back_together_exactly(text: str) -> None:
    _check(StatementReuse(), text)


def test_unchanged_statements_are_reused_and_changed_ones_parsed_again() -> None:
    text = (ROOT / "examples" / "resnet_blocks.py").read_text(encoding="utf-8")
    reuse = StatementReuse()
    before = _check(reuse, text)
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "def forward" in line) + 1
    edited = "".join([*lines[:at], "        # a new comment\n", *lines[at:]])
    after = _check(reuse, edited)
    same = [a is b for a, b in zip(before.body, after.body, strict=True)]
    assert same.count(False) == 1  # only the class holding the edit was parsed again
    assert _check(reuse, text).body[same.index(False)] is not after.body[same.index(False)]


EDITS = ["# note", "pass", "", "x = 1", "    # indented", "\tpass"]


@settings(max_examples=30, **SETTINGS)
@given(
    path=st.sampled_from(sorted((ROOT / "examples").glob("*.py"))),
    where=st.lists(st.floats(0, 1), min_size=1, max_size=4),
    snippets=st.lists(st.sampled_from(EDITS), min_size=1, max_size=4),
    indent=st.sampled_from(["", "    ", "        "]),
)
def test_random_edits_parse_as_libcst_would(
    path: Path, where: list[float], snippets: list[str], indent: str
) -> None:
    reuse = StatementReuse()
    text = path.read_text(encoding="utf-8")
    # the unedited file is checked by test_every_source_file_is_put_back_together_exactly
    assert reuse.parse(text, ast.parse(text)).code == text
    for fraction, snippet in zip(where, snippets, strict=False):
        lines = text.splitlines(keepends=True)
        at = int(fraction * len(lines))
        edited = "".join([*lines[:at], indent + snippet + "\n", *lines[at:]])
        try:
            ast.parse(edited)
        except SyntaxError:
            continue
        text = edited
        _check(reuse, text)
    assume(True)


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name)
def test_findings_with_reuse_match_a_fresh_lint_through_edits(path: Path) -> None:
    reuse = StatementReuse()
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    versions = [text]
    for at in range(0, len(lines), max(1, len(lines) // 6)):
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())] if at < len(lines) else ""
        versions.append("".join([*lines[:at], f"{indent}# edit at {at}\n", *lines[at:]]))
    versions.append(text)
    for version in versions:
        assert lint_source(version, "m.py", reuse=reuse) == lint_source(version, "m.py")


def test_a_syntax_error_is_reported_where_a_whole_parse_reports_it() -> None:
    reuse = StatementReuse()
    good = textwrap.dedent(
        """\
        import torch


        def f(x):
            return x.relu_()
        """
    )
    lint_source(good, "m.py", reuse=reuse)
    broken = good + "\n\ndef g(:\n    pass\n"
    assert lint_source(broken, "m.py", reuse=reuse) == lint_source(broken, "m.py")


STEPS = [
    # a helper that mutates its argument, and a caller that reads it again
    """\
    import torch
    import torch.nn.functional as F


    def helper(x, r):
        x += r
        return x.sum()


    def caller(a, r):
        h = torch.sigmoid(a)
        s = helper(h, r)
        return s + h.mean()
    """,
    # the caller now runs under no_grad: what the helper's call sites run under changes
    """\
    import torch
    import torch.nn.functional as F


    def helper(x, r):
        x += r
        return x.sum()


    @torch.no_grad()
    def caller(a, r):
        h = torch.sigmoid(a)
        s = helper(h, r)
        return s + h.mean()
    """,
    # the helper reached through an alias, the decorator gone again
    """\
    import torch
    import torch.nn.functional as F


    def helper(x, r):
        x += r
        return x.sum()


    run = helper


    def caller(a, r):
        h = torch.sigmoid(a)
        s = run(h, r)
        return s + h.mean()
    """,
    # the imports change under unchanged functions
    """\
    import torch as T
    import torch.nn.functional as F


    def helper(x, r):
        x += r
        return x.sum()


    run = helper


    def caller(a, r):
        h = torch.sigmoid(a)
        s = run(h, r)
        return s + h.mean()
    """,
    """\
    import torch
    from torch.nn.functional import relu_ as F


    def helper(x, r):
        x += r
        return x.sum()


    def caller(a, r):
        h = torch.sigmoid(a)
        F(h)
        s = helper(h, r)
        return s + h.mean()
    """,
]


def test_semantic_edits_give_what_a_fresh_lint_gives() -> None:
    reuse = StatementReuse()
    seen = set()
    for step in [*STEPS, *reversed(STEPS)]:
        text = textwrap.dedent(step)
        fresh = lint_source(text, "m.py")
        assert lint_source(text, "m.py", reuse=reuse) == fresh
        seen.add(tuple(f.code for f in fresh))
    assert len(seen) > 1  # the edits do change the findings


LABELLED = sorted([*(ROOT / "examples").glob("*.py"), *(ROOT / "tests" / "cases").rglob("*.py")])


@settings(max_examples=40, **SETTINGS)
@given(
    path=st.sampled_from(LABELLED),
    moves=st.lists(
        st.tuples(st.sampled_from(["drop", "copy", "swap"]), st.floats(0, 1), st.floats(0, 1)),
        max_size=5,
    ),
)
def test_random_line_edits_lint_as_a_fresh_lint_does(
    path: Path, moves: list[tuple[str, float, float]]
) -> None:
    reuse = StatementReuse()
    text = path.read_text(encoding="utf-8")
    codes = {f"IPL00{n}" for n in range(1, 9)}
    assert lint_source(text, "m.py", codes, reuse=reuse) == lint_source(text, "m.py", codes)
    for move, fraction, other in moves:
        lines = text.splitlines(keepends=True)
        at = min(int(fraction * len(lines)), len(lines) - 1)
        if move == "swap":
            to = min(int(other * len(lines)), len(lines) - 1)
            lines[at], lines[to] = lines[to], lines[at]
        else:
            lines[at : at + 1] = [] if move == "drop" else [lines[at], lines[at]]
        text = "".join(lines)
        fresh = lint_source(text, "m.py", codes)
        assert lint_source(text, "m.py", codes, reuse=reuse) == fresh


def test_a_repeated_statement_gets_nodes_of_its_own() -> None:
    text = textwrap.dedent(
        """\
        import torch

        h = torch.sigmoid(torch.randn(3, requires_grad=True))
        state = {"h": h}
        h.add_(1)
        h.add_(1)
        change = h - state["h"]
        """
    )
    reuse = StatementReuse()
    for version in (text, text.replace("h.add_(1)\n", "h.add_(1)\nh.add_(1)\n", 1), text):
        module = _check(reuse, version)
        assert len({id(s) for s in module.body}) == len(module.body)
        assert lint_source(version, "m.py", reuse=reuse) == lint_source(version, "m.py")

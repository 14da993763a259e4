"""The tree built from the stdlib ``ast`` is libcst's own tree as the analysis reads it.

Compared node for node (kinds in walk order, names and numbers), trivia aside, on snippets of
every construct and on every file of the repository; and the findings on both trees are the
same. The engine answers from the built tree and parses with libcst only files with findings.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable
from pathlib import Path

import libcst as cst
import pytest

from inplace_lint import engine
from inplace_lint.checks import all_rules
from inplace_lint.engine import _apply_precedence, lint_source
from inplace_lint.facts.dataflow import analyze
from inplace_lint.facts.walk import shared_children, walk
from inplace_lint.from_ast import Unsupported, module_from_ast

ROOT = Path(__file__).resolve().parent.parent
ALL_CODES = frozenset(rule.code for rule in all_rules())
#: Spelled differently by design (strings are one node, one-line bodies an indented block).
_STRINGS = {"SimpleString", "FormattedString", "ConcatenatedString", "FormattedStringText"}

SNIPPETS = {
    "functions": """
        @decorator(arg)
        @other
        def f(a, b: int, /, c=1, *args: str, d, e=2, **kw) -> None:
            return a
        async def g(*, k):
            async for x in y:
                await x
            async with a as b, c:
                pass
        h = lambda p, q=1, *r, s, **t: p + q
        def gen():
            yield
            yield 1
            yield from gen()
        """,
    "classes": """
        class A(Base, *more, metaclass=Meta, **opts):
            x: int = 1
            y: Tensor
            def method(self):
                super().method()
        """,
    "control flow": """
        if a:
            pass
        elif b:
            pass
        elif c:
            x = 1
        else:
            if d:
                pass
        while x < 3:
            x += 1
            break
        else:
            continue
        for i, (j, *k) in enumerate(z):
            pass
        else:
            pass
        try:
            pass
        except (ValueError, TypeError) as exc:
            raise RuntimeError() from exc
        except Exception:
            raise
        else:
            pass
        finally:
            del a, b
            del c
        try:
            pass
        except* ValueError as group:
            pass
        """,
    "small statements": """
        import torch, torch.nn as nn
        from torch.nn import functional as F, init
        from . import sibling
        from ..pkg.mod import *
        global g1, g2
        a = b = c
        a, *rest = x
        [p, q] = y
        x.attr: int = 3
        assert x, "message"
        a = 1; b.relu_(); c += a
        def scoped():
            nonlocal_holder = 1
            def inner():
                nonlocal nonlocal_holder
        """,
    "expressions": """
        x = a if b else c
        y = (n := 10) + -n + +n + ~n
        z = not a and b and c or d or e
        w = 1 < a <= 2 != b is not None is c in d not in e
        v = a @ b ** c // d % e << f >> g | h ^ i & j
        u = x[1:2, ::3, ...][..., None][(a, b)][a, b][*idx]
        t = f(*args, k=1, **kw)(g)(h=2)
        s = f(k=1, *args)
        r = [e for e in a if e if not e for f in e]
        q = {k: v for k, v in d.items()}, {s for s in t}, (g for g in h)
        o = [1, *a], (2,), (), {1, *b}, {"k": 1, **extra}, {}
        n = 1.5e-3 + 2j + 0x10 + 1_000 + b"bytes" + "str" "cat"
        m = f"{a!r:>{width}} {b=} {c:.3f}" f"tail"
        l = x.y.z().w[0].v
        """,
}


def _skeleton(module: cst.Module) -> list[str]:
    out: list[str] = []
    for node in walk(module):
        kind = type(node).__name__
        if kind in _STRINGS:
            continue
        if kind == "SimpleStatementSuite":
            out += ["IndentedBlock", "SimpleStatementLine"]
            continue
        if isinstance(node, cst.Name):
            kind += ":" + node.value
        elif isinstance(node, cst.Integer | cst.Float | cst.Imaginary):
            kind += ":" + repr(ast.literal_eval(node.value))
        out.append(kind)
    return out


def _codes(module: cst.Module) -> list[str]:
    with shared_children():
        facts = analyze(module)
        raw = [f for rule in all_rules() for f in rule.check(facts)]
    return sorted(f.code for f in _apply_precedence(raw))


#: one held-out round file in this many is checked: the rounds (``bench/rounds``, some 1,900
#: short scripts of one style, 50 more each session) would otherwise be most of the run
ROUND_SAMPLE = 64
#: likewise one case file (``tests/cases``, some 650 short scripts) in this many: the engine's
#: own code, tests, examples and benchmarks are all checked (the suite's time on two cores
#: is near CI's five minutes; the cases are linted whole by the flake8 and harness tests)
CASE_SAMPLE = 8


def _repo_files() -> list[Path]:
    found: list[Path] = []
    for folder in ("inplace_lint", "tests", "examples", "bench"):
        found += [
            p
            for p in (ROOT / folder).rglob("*.py")
            if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)
        ]
    rounds, cases = ROOT / "bench" / "rounds", ROOT / "tests" / "cases"
    held_out = sorted(p for p in found if p.is_relative_to(rounds))
    own = sorted(p for p in found if p.is_relative_to(cases))
    kept = set(held_out[::ROUND_SAMPLE]) | set(own[::CASE_SAMPLE])
    return sorted(
        p for p in found if not (p.is_relative_to(rounds) or p.is_relative_to(cases)) or p in kept
    )


@pytest.mark.parametrize("source", SNIPPETS.values(), ids=SNIPPETS.keys())
def test_snippet_trees_match_libcst(source: str) -> None:
    source = textwrap.dedent(source)
    built = module_from_ast(ast.parse(source))
    assert _skeleton(built) == _skeleton(cst.parse_module(source))


#: the repository's files are checked in this many parts, which pytest-xdist spreads over
#: its workers (one test over every file took a fifth of the suite's time on one worker)
SHARDS = 8


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_repository_file_builds_the_same_tree_and_findings(
    libcst_parse: Callable[[Path], tuple[str, cst.Module]], shard: int
) -> None:
    """libcst's parse of each file is shared with test_reparse.py (tests/conftest.py). A
    file with a ``match`` statement (round 12 has one) is analysed on libcst's own tree, as
    the engine does (``test_match_statements_fall_back_to_libcst``)."""
    files = _repo_files()
    assert len(files) > 200
    for path in files[shard::SHARDS]:
        text, parsed = libcst_parse(path)
        try:
            built = module_from_ast(ast.parse(text))
        except Unsupported:
            assert "match" in text, path
            continue
        assert _skeleton(built) == _skeleton(parsed), path
        assert _codes(built) == _codes(parsed), path


def test_strings_numbers_and_annotations_read_as_in_libcst() -> None:
    source = "def f(x: 'Optional[List[Tensor]]' = None, n: int = 0x10): d['key'] = 1.50\n"
    built = module_from_ast(ast.parse(source))
    func = built.body[0]
    assert isinstance(func, cst.FunctionDef)
    first, second = func.params.params
    assert first.annotation is not None and second.default is not None
    annotation = first.annotation.annotation
    assert isinstance(annotation, cst.SimpleString)
    assert annotation.evaluated_value == "Optional[List[Tensor]]"
    assert built.code_for_node(annotation) == "'Optional[List[Tensor]]'"
    assert isinstance(second.default, cst.Integer) and int(second.default.value) == 16
    assign = func.body.body[0].body[0]  # type: ignore[attr-defined]
    assert isinstance(assign.targets[0].target, cst.Subscript)
    assert float(assign.value.value) == 1.5


def test_match_statements_fall_back_to_libcst() -> None:
    source = textwrap.dedent(
        """
        import torch

        class Gate(torch.nn.Module):
            def forward(self, x, kind):
                match kind:
                    case "a":
                        y = torch.sigmoid(x)
                        y.mul_(2)
                        return y
        """
    )
    with pytest.raises(Unsupported):
        module_from_ast(ast.parse(source))
    assert [f.code for f in lint_source(source, "m.py")] == ["IPL001"]


def test_libcst_parses_only_files_with_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = cst.parse_module

    def counting(text: str) -> cst.Module:
        calls.append(len(text))
        return real(text)

    monkeypatch.setattr(engine.cst, "parse_module", counting)
    head = "import torch\n\nclass Gate(torch.nn.Module):\n    def forward(self, x):\n"
    clean = head + "        y = torch.conv2d(x, x)\n        y += 1\n        return y\n"
    hazard = head + "        y = torch.sigmoid(x)\n        y += 1\n        return y\n"
    assert lint_source(clean, "clean.py") == []
    assert calls == []
    assert [f.code for f in lint_source(hazard, "hazard.py")] == ["IPL001"]
    assert calls == [len(hazard)]

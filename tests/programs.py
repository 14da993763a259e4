"""Small programs for the facts tests: what the engine reports on one, and how torch runs it.

``codes`` lints a source with every rule (opt-in ones too) and gives (line, code) pairs;
``behave`` runs a hazard, which must raise torch's error, and look-alikes, which must run.
"""

from __future__ import annotations

import pytest

from inplace_lint.checks import all_rules
from inplace_lint.engine import lint_source

ALL = frozenset(rule.code for rule in all_rules())
IN_PLACE_ERROR = "modified by an inplace operation"


def codes(source: str) -> list[tuple[int, str]]:
    """(line, code) of every finding on ``source``, linted as ``t.py`` with every rule."""
    return [(f.line, f.code) for f in lint_source(source, "t.py", ALL)]


def run(source: str) -> dict[str, object]:
    """Run ``source`` as ``t.py`` under torch; its module namespace."""
    pytest.importorskip("torch")
    scope: dict[str, object] = {}
    exec(compile(source, "t.py", "exec"), scope)
    return scope


def behave(hazard: str, *safe: str, match: str = IN_PLACE_ERROR) -> None:
    """Under torch, ``hazard`` raises a RuntimeError matching ``match`` and each ``safe``
    runs."""
    pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=match):
        run(hazard)
    for source in safe:
        run(source)

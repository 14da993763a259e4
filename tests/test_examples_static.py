"""Every catalogue example, case file and zoo file: the linter reports exactly the markers."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import Example, all_examples, parse_markers

from inplace_lint.checks import all_rules
from inplace_lint.engine import lint_source

ROOT = Path(__file__).resolve().parent.parent
ALL_CODES = frozenset(rule.code for rule in all_rules())
#: Cases the analysis knows it misses, with the reason; strict, so a fix must remove them.
KNOWN_MISSES = {
    "tests/cases/ipl001/lstm_state_tuple_zoneout_mul_.py": (
        "the cell's forward saves the returned state; tuples returned by a user module are not "
        "followed back into the caller"
    ),
    "tests/cases/ipl006/saliency_dict_target_relu_.py": (
        "the grad target is a dict entry filled inside another function's forward"
    ),
}
EXAMPLES = [
    pytest.param(e, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[e.origin]))
    if e.origin in KNOWN_MISSES
    else e
    for e in all_examples(ROOT)
]
ZOO = sorted((ROOT / "examples").glob("*.py"))


def _report(source: str, origin: str) -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in lint_source(source, origin, ALL_CODES)}


def test_examples_were_collected() -> None:
    assert len(EXAMPLES) >= 200
    assert len(ZOO) >= 6


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: getattr(e, "origin", str(e)))
def test_example_findings_match_markers(example: Example) -> None:
    found = _report(example.source, example.origin)
    missing, unexpected = example.expected - found, found - example.expected
    assert found == example.expected, f"missing: {sorted(missing)} unexpected: {sorted(unexpected)}"


@pytest.mark.parametrize("path", ZOO, ids=lambda p: p.name)
def test_zoo_findings_match_markers(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    expected = parse_markers(source)
    found = _report(source, str(path))
    assert found == expected, (
        f"missing: {sorted(expected - found)} unexpected: {sorted(found - expected)}"
    )

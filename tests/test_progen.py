"""The differential fuzzer's program generator (tools/progen.py) and torch labeller.

Derandomised and small (20 programs, a few seconds): every program and its out-of-place twin
compile and run under torch, an error is always an in-place one, and the labeller says the same
thing twice. How well the linter scores on such programs is a measurement that
``bench/fuzz_diff.py`` prints; nothing here asserts it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

ROOT = Path(__file__).resolve().parent.parent
for _path in (ROOT / "tools", ROOT / "bench"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from fuzz_diff import Labeller, Verdict  # noqa: E402
from progen import BUDGET, Program, programs  # noqa: E402

if importlib.util.find_spec("torch") is None:  # the labeller's worker needs it; not imported here
    pytest.skip("torch is not installed", allow_module_level=True)


def _generate(count: int) -> list[Program]:
    found: list[Program] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(programs())
    def collect(program: Program) -> None:
        found.append(program)

    collect()
    return found


PROGRAMS = _generate(20)


@pytest.fixture(scope="module")
def verdicts() -> list[tuple[Verdict, Verdict]]:
    """Each program labelled twice, without the cache."""
    with Labeller() as labeller:
        return [(labeller.label(p, cache=False), labeller.label(p, cache=False)) for p in PROGRAMS]


def test_programs_are_small_and_their_twins_differ_only_at_inplace_statements() -> None:
    assert len(PROGRAMS) == 20
    for program in PROGRAMS:
        source, twin = program.source(), program.twin()
        compile(source, "prog.py", "exec")
        compile(twin, "twin.py", "exec")
        assert len(source.splitlines()) <= BUDGET + 12, source
        assert program.sids, "every program has an in-place statement"
        assert program.source(()) == source
        for sid, line in program.sids.items():
            assert program.source({sid}) != source
            assert line in program.sites({sid})


def test_programs_run_or_raise_only_inplace_errors_and_twins_run(
    verdicts: list[tuple[Verdict, Verdict]],
) -> None:
    for program, (verdict, _) in zip(PROGRAMS, verdicts, strict=True):
        assert verdict.label in ("raises", "silent", "safe"), (verdict.detail, program.source())
        if verdict.label == "raises":
            assert verdict.family != "other", (verdict.detail, program.source())
        assert set(verdict.culprits) <= set(program.sids)
        assert bool(verdict.culprits) == (verdict.label != "safe")
    labels = {verdict.label for verdict, _ in verdicts}
    assert len(labels) >= 2, labels


def test_verdicts_are_stable(verdicts: list[tuple[Verdict, Verdict]]) -> None:
    for program, (first, second) in zip(PROGRAMS, verdicts, strict=True):
        assert first == second, program.source()

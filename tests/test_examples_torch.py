"""Run every catalogue example and case file under torch and check its label.

* ``hazard raises``: the example raises; its twin (marked lines made out of place) runs.
* ``hazard silent``: the example and its twin run, and their results differ.
* ``safe``: the example runs; its twin (every line made out of place) computes the same.

``no-twin`` skips the twin half of a verdict. The runs go through the session's
``torch_runs`` (tests/conftest.py), which test_fix.py asks again for the same twins.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from harness import Example, TorchRuns, all_examples, compare

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = all_examples(ROOT)
#: Results closer than this count as equal.
TOLERANCE = 1e-6


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.origin for e in EXAMPLES])
def test_example_verdict(example: Example, torch_runs: TorchRuns) -> None:
    original = torch_runs.run(example.source, example.origin)
    if example.label == "hazard" and example.mode == "raises":
        assert original.error_type is not None, "expected the example to raise"
        assert issubclass(original.error_type, RuntimeError), original.error
        if example.twin:
            twin = torch_runs.run_twin(example)
            assert twin.ok, f"twin failed: {twin.error}"
        return
    assert original.ok, f"example failed: {original.error}"
    if not example.twin:
        return
    twin = torch_runs.run_twin(example)
    assert twin.ok, f"twin failed: {twin.error}"
    difference = compare(original, twin)
    assert difference is not None, "the example leaves no tensors to compare"
    if example.mode == "silent":
        assert difference > TOLERANCE, "the twin computed the same results"
    else:
        assert difference <= TOLERANCE, f"the twin differs by {difference}"


def test_examples_found() -> None:
    assert EXAMPLES, "no examples collected"
    assert len({e.origin for e in EXAMPLES}) == len(EXAMPLES)

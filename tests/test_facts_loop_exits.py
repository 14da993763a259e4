"""An arm that ends in ``continue`` or ``break``: what it puts into a container is not seen by
the rest of that iteration (mmdet's per-level target heads, untuned run 6), only by the next
iterations and after the loop. Each program runs under torch."""

from __future__ import annotations

from tests.programs import codes, run

FRESH_PER_LEVEL = """
import torch

out = []
for level in range(3):
    t = torch.zeros(4)
    if level == 0:
        out.append(t)
        continue
    t[0] = 1
    out.append(t)
stacked = torch.stack(out)
"""

SHARED_ACROSS_LEVELS = FRESH_PER_LEVEL.replace(
    "out = []\nfor level in range(3):\n    t = torch.zeros(4)\n",
    "out = []\nt = torch.zeros(4)\nfor level in range(3):\n",
)


def test_an_append_in_an_arm_that_continues_is_not_read_after_the_if() -> None:
    assert codes(FRESH_PER_LEVEL) == []
    assert run(FRESH_PER_LEVEL)["stacked"][0, 0] == 0  # the first level kept its zeros


def test_the_same_tensor_appended_before_a_later_write_is_still_stale() -> None:
    write = SHARED_ACROSS_LEVELS.splitlines().index("    t[0] = 1") + 1
    assert codes(SHARED_ACROSS_LEVELS) == [(write, "IPL002")]
    assert run(SHARED_ACROSS_LEVELS)["stacked"][0, 0] == 1  # changed behind out[0]

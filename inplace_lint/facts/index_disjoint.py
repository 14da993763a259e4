"""Whether two views of one tensor are provably disjoint, from the texts of their indices.

Each view is known by the texts of the basic subscript that made it from a tensor that is no
view itself (``e[:, 0]``: ``(":", "0")``; a subscript-assignment target likewise). Two such
indices of one length are disjoint where one position holds different integers (``0`` and
``1``) or one name with different constant offsets (``i`` and ``i + 1``). Anything else (a
slice, another name, an unknown index) may overlap. Limits: texts, not values: ``i`` and
``j`` are taken to overlap even when they never meet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_OFFSET = re.compile(r"^\s*([A-Za-z_][A-Za-z_0-9]*)\s*(?:([+-])\s*(\d+))?\s*$")
_INTEGER = re.compile(r"^\s*(-?\d+)\s*$")

Index = tuple[str, ...]


def disjoint_indices(written: Sequence[Index] | None, read: Sequence[Index] | None) -> bool:
    """Every written index is disjoint from every read one (and there are some of each)."""
    if not written or not read:
        return False
    return all(_disjoint(w, r) for w in written for r in read)


def _disjoint(first: Index, second: Index) -> bool:
    if len(first) != len(second):
        return False
    return any(_differ(a, b) for a, b in zip(first, second, strict=True))


def _differ(first: str, second: str) -> bool:
    numbers = _INTEGER.match(first), _INTEGER.match(second)
    if numbers[0] and numbers[1]:
        return int(numbers[0].group(1)) != int(numbers[1].group(1))
    a, b = _OFFSET.match(first), _OFFSET.match(second)
    if not a or not b or a.group(1) != b.group(1):
        return False
    return _offset(a) != _offset(b)


def _offset(match: re.Match[str]) -> int:
    if match.group(2) is None:
        return 0
    value = int(match.group(3))
    return value if match.group(2) == "+" else -value

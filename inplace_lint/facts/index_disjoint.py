"""Whether two views of one tensor are provably disjoint, from the texts of their indices.

Each view is known by the texts of the basic subscript that made it from a tensor that is no
view itself (``e[:, 0]``: ``(":", "0")``; a subscript-assignment target likewise). Two such
indices of one length are disjoint where one position holds different integers (``0`` and
``1``) or one name with different constant offsets (``i`` and ``i + 1``), or one is a slice
that stops where the other starts (``v[:b]`` and ``v[b:]``). Anything else (another slice,
another name, an unknown index) may overlap. Limits: texts, not values: ``i`` and
``j`` are taken to overlap even when they never meet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_OFFSET = re.compile(r"^\s*([A-Za-z_][A-Za-z_0-9]*)\s*(?:([+-])\s*(\d+))?\s*$")
_INTEGER = re.compile(r"^\s*(-?\d+)\s*$")

Index = tuple[str, ...]


#: an index with the storage group of the tensor it indexes
Located = tuple[int, Index]


def disjoint_indices(written: Sequence[Located] | None, read: Sequence[Located] | None) -> bool:
    """Every written index is disjoint from every read one of the same storage (and some
    read storage was written: another storage's index says nothing of this one)."""
    pairs = [(w, r) for gw, w in written or () for gr, r in read or () if gw == gr]
    return bool(pairs) and all(_disjoint(w, r) for w, r in pairs)


def _disjoint(first: Index, second: Index) -> bool:
    if len(first) != len(second):
        return False
    return any(_differ(a, b) for a, b in zip(first, second, strict=True))


def _differ(first: str, second: str) -> bool:
    if _abutting(first, second) or _abutting(second, first):
        return True
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


def _abutting(first: str, second: str) -> bool:
    """``first`` is a slice that stops where the slice ``second`` starts (``:b``, ``b:``)."""
    a, b = first.split(":"), second.split(":")
    if len(a) != 2 or len(b) != 2:
        return False
    stop, start = a[1].strip(), b[0].strip()
    return bool(stop) and stop == start

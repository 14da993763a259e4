"""A cheap text test that keeps files that cannot hold a hazard away from the parser."""

from __future__ import annotations

import re

#: Something that can write a tensor in place, or a rule's other trigger.
_CANDIDATE = re.compile(
    r"[A-Za-z0-9]_\s*\("  # x.relu_(  F.relu_(
    r"|[-+*/%&|^]=|<<=|>>="  # augmented assignment
    r"|\]\s*=[^=]"  # subscript assignment
    r"|inplace|out\s*=|\.data\b|clamp|clip|\.step\s*\(|autograd|\.backward\s*\("
)


def may_contain_hazard(text: str) -> bool:
    """False only when the file certainly cannot produce a finding."""
    if "torch" not in text:
        return False
    return _CANDIDATE.search(text) is not None

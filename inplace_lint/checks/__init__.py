"""The rules. Each module in this package defines one ``RULE``; the registry is derived."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from inplace_lint.checks.base import RawFinding, Rule

PARSE_ERROR = "IPL999"

__all__ = ["PARSE_ERROR", "RawFinding", "Rule", "all_rules", "rule_by_code"]


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, found by importing the modules of this package, sorted by code."""
    found: list[Rule] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if isinstance(rule, Rule):
            found.append(rule)
    return tuple(sorted(found, key=lambda r: r.code))


def rule_by_code(code: str) -> Rule | None:
    for rule in all_rules():
        if rule.code == code:
            return rule
    return None

"""The rules. Each module in this package defines one ``RULE``; the registry is derived."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from inplace_lint.checks.base import Evidence, LineOf, Message, RawFinding, Rule, Severity

PARSE_ERROR = "IPL999"

__all__ = [
    "PARSE_ERROR",
    "Evidence",
    "LineOf",
    "Message",
    "RawFinding",
    "Rule",
    "Severity",
    "all_rules",
    "code_for_evidence",
    "rule_by_code",
]


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


@cache
def _by_code() -> dict[str, Rule]:
    return {rule.code: rule for rule in all_rules()}


def rule_by_code(code: str) -> Rule | None:
    """The rule with exactly this code, or None (IPL999 is no rule: see ``catalogue``)."""
    return _by_code().get(code)


@cache
def code_for_evidence(evidence: Evidence) -> str:
    """The code the dynamic checker reports ``evidence`` under (the rule that declares it)."""
    for rule in all_rules():
        if evidence in rule.evidence:
            return rule.code
    raise KeyError(f"no rule declares the run-time evidence {evidence!r}")

"""The shape every rule shares, and the raw result a rule yields before positions exist."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst

from inplace_lint.facts.events import Facts


@dataclass(frozen=True)
class RawFinding:
    """A finding that still points at syntax nodes; the engine turns it into a Finding."""

    code: str
    node: cst.CSTNode
    stmt: cst.CSTNode | None
    message: str
    related: tuple[tuple[cst.CSTNode, str], ...] = ()


@dataclass(frozen=True)
class Rule:
    """One rule: its fixed code, its name, a one-line summary and the query that runs it."""

    code: str
    name: str
    summary: str
    check: Callable[[Facts], Iterator[RawFinding]]
    default: bool = True

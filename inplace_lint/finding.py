"""The shared vocabulary: findings, their locations and optional fixes.

This module imports nothing from the rest of the package, so every layer can use it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Position:
    """A 1-based line and 1-based column in a source file; in a notebook, ``cell`` is the
    1-based cell (counting every cell, as ruff does) and the line is within that cell."""

    line: int
    column: int
    cell: int | None = None


@dataclass(frozen=True)
class Related:
    """A second location that explains a finding ("saved for backward here")."""

    position: Position
    message: str


@dataclass(frozen=True)
class Edit:
    """Replace the text between ``start`` and ``end`` (1-based, end exclusive) with ``text``."""

    start: Position
    end: Position
    text: str


@dataclass(frozen=True)
class Fix:
    """A rewrite that removes the hazard; ``safe`` fixes never change behaviour of correct code."""

    description: str
    edits: tuple[Edit, ...]
    safe: bool = True


@dataclass(frozen=True)
class Finding:
    """One hazard at one place in one file."""

    path: str
    start: Position
    end: Position
    code: str
    message: str
    related: tuple[Related, ...] = field(default=())
    fix: Fix | None = None
    #: Lines of the whole statement that holds the finding, for ``# noqa`` matching.
    statement_lines: tuple[int, int] | None = None

    @property
    def line(self) -> int:
        return self.start.line

    @property
    def column(self) -> int:
        return self.start.column

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.start.cell or 0, self.start.line, self.start.column, self.code)

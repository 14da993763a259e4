"""The autograd ledger's bookkeeping of in-place writes waiting to be judged.

A :class:`Pending` is one write whose old value a later read may still want (a stale read) or
whose hidden change a later read may use (a `.data` write). The ledger knows storage groups and
sequence numbers, not syntax: the nodes it carries are opaque handles for the rules to place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from inplace_lint.facts.model import Value, Write


@dataclass
class Pending:
    groups: frozenset[int]
    write: Write
    seq: int
    written_name: str | None
    written: list[Value] = field(default_factory=list)
    done: bool = False
    #: the loops the write sits in (innermost last) and the index it writes at, if any
    loops: tuple[int, ...] = ()
    target_node: cst.CSTNode | None = None
    #: written through a view: stale only once the in-place result is bound to another name
    through_view: bool = False
    bound_away: bool = False

    def soft_alias(self, value: Value) -> bool:
        """``value`` and a written value may be copies of each other (``x.float()``)."""
        if any(value is w for w in self.written):
            return False  # the very tensor that was written, not a maybe-copy of it
        roots = {w.soft_of or w.id for w in self.written}
        return (value.soft_of or value.id) in roots and any(
            value.soft_of or w.soft_of for w in self.written
        )

    @property
    def bound_elsewhere(self) -> bool:
        return self.write.elsewhere

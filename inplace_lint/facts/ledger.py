"""The autograd ledger: storage groups, version counters, saves, pending writes, backward points.

What autograd itself keeps track of, modelled without any syntax: a storage :class:`Group` has
a version counter that every visible in-place write moves (and a hidden counter for writes
through ``.data``, which autograd cannot see); an op that saves a tensor for backward leaves a
:class:`SaveRecord` of the group and its version; a backward point (:func:`overwritten`)
finds the records whose group moved since they were saved, on a path that can run after the
save. A :class:`Pending` is a write whose old value a later read may still want.

The ledger never imports libcst. The nodes it carries (where a write or a save happened) are
opaque handles that the interpreter passes in and the rules place; a write is anything with a
``path`` (the branch arms it sits in).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

_ids = itertools.count(1)


def next_id() -> int:
    """A fresh identity for a group, a save record or an abstract value (one sequence)."""
    return next(_ids)


#: (branch, arm) pairs: the arms of enclosing branches a program point sits in.
Path = tuple[tuple[int, int], ...]


def compatible(a: Path, b: Path) -> bool:
    """False when two program points sit in different arms of the same branch."""
    arms = dict(a)
    return all(arms.get(branch, arm) == arm for branch, arm in b)


class LedgerWrite(Protocol):
    """What the ledger needs of a write: the path it runs on, and whether its in-place result
    is used as a new tensor elsewhere."""

    path: Path
    elsewhere: bool
    name: str | None
    soft_through: frozenset[int]

    @property
    def rebinds(self) -> frozenset[str]:
        """Names the write's statement binds to its in-place result (``x += y``)."""
        ...


class Held(Protocol):
    """What the ledger needs of a value a pending write wrote."""

    id: int
    soft_of: int | None


@dataclass(eq=False)
class Group:
    """Tensors sharing one storage and one version counter (a base and its views)."""

    name: str
    version: int = 0
    hidden: int = 0
    leaf: bool = False  # a leaf that requires grad lives here
    #: made by a factory torch documents as returning uninitialized data (``torch.empty``)
    #: and not yet written whole: its old values are nobody's, so no read of them is stale
    uninitialized: bool = False
    #: a torch module took a tensor of this storage (or a view of it) as input: what it
    #: holds is a tensor, whatever a parameter's annotation left open (``x += r`` writes)
    tensor: bool = False
    #: a module's parameters: ``module.requires_grad_(False)`` froze them (they need no grad)
    frozen: bool = False
    #: a module's own tensors frozen one by one (``self.embedding.weight.requires_grad =
    #: False``): their attribute names, seen by every method through the cached module
    frozen_attributes: set[str] = field(default_factory=set)
    writes: list[tuple[int, Any]] = field(default_factory=list)
    hidden_writes: list[tuple[int, Any]] = field(default_factory=list)
    #: write id -> the path on which the write reaches this group, where it is narrower than
    #: the write's own (the name held this group only after one arm of an earlier branch)
    write_paths: dict[int, Path] = field(default_factory=dict)
    id: int = field(default_factory=next_id)
    #: the parameters of a submodule are also its owner's: the group of the module this one
    #: is an attribute of (``model.discriminator`` -> ``model``), and the groups it owns
    parent: Group | None = field(default=None, repr=False)
    children: list[Group] = field(default_factory=list, repr=False)

    def adopt(self, child: Group) -> None:
        """``child`` holds part of this group's tensors (a submodule's parameters)."""
        child.parent = self
        self.children.append(child)

    def is_frozen(self) -> bool:
        """This module's parameters, or those of a module that owns it, were frozen."""
        group: Group | None = self
        seen: list[Group] = []
        while group is not None and group not in seen:
            if group.frozen:
                return True
            seen.append(group)
            group = group.parent
        return False

    def family(self) -> list[Group]:
        """This group, the groups that own it and the groups it owns: a write to any of
        them writes tensors this group's saves may hold."""
        found = [self]
        owner = self.parent
        while owner is not None and owner not in found:
            found.append(owner)
            owner = owner.parent
        stack = list(self.children)
        while stack:
            child = stack.pop()
            if child not in found:
                found.append(child)
                stack.extend(child.children)
        return found

    def bump(self, write: LedgerWrite, hidden: bool) -> None:
        """``write`` changed this storage (and, for a module's parameters, those of its
        owners and submodules): move the version counter autograd checks, or for a write
        hidden from autograd (through ``.data``) only the hidden one."""
        for group in self.family() if self.parent or self.children else [self]:
            group.bump_one(write, hidden)

    def bump_one(self, write: LedgerWrite, hidden: bool) -> None:
        """Move this group's own counter for ``write``."""
        if hidden:
            self.hidden += 1
            self.hidden_writes.append((self.hidden, write))
        else:
            self.version += 1
            self.writes.append((self.version, write))

    def writes_after(self, version: int, path: Path = ()) -> list[Any]:
        """The writes after ``version`` that can run on the same path as ``path``, in order."""
        return [
            write
            for after, write in self.writes
            if after > version and compatible(path, self.write_paths.get(id(write), write.path))
        ]

    def hidden_after(self, hidden: int, path: Path = ()) -> list[Any]:
        """Likewise for writes hidden from autograd."""
        return [
            write
            for after, write in self.hidden_writes
            if after > hidden and compatible(path, self.write_paths.get(id(write), write.path))
        ]


@dataclass(eq=False)
class SaveRecord:
    """An op saved the tensor in ``group`` (at ``version``) for its backward."""

    group: Group
    version: int
    hidden: int
    op: str
    node: Any  # where it was saved: an opaque handle for the rules
    role: str  # "input", "result" or "parameters"
    tensor: str
    path: Path = ()
    #: kept only because this tensor itself requires grad (``pad(x)``, ``x.pow(2)``): a
    #: summary holds for a caller only when what the caller passes does
    own: bool = False
    #: saved through a soft alias of the value with this id (``x.float()``, which may be
    #: ``x`` or a copy): only a write through such an alias surely reaches what was saved
    soft: int | None = None
    id: int = field(default_factory=next_id)


def save(
    group: Group,
    op: str,
    node: Any,
    role: str,
    tensor: str,
    path: Path,
    own: bool = False,
    soft: int | None = None,
) -> SaveRecord:
    """Record that ``op`` saved ``group`` as it is now (its current versions)."""
    return SaveRecord(
        group=group,
        version=group.version,
        hidden=group.hidden,
        op=op,
        node=node,
        role=role,
        tensor=tensor,
        path=path,
        own=own,
        soft=soft,
    )


def overwritten(
    records: Iterable[SaveRecord], consumed: set[int]
) -> Iterator[tuple[Any, SaveRecord]]:
    """A backward point over a graph that depends on ``records``: each record (in the order
    they were made) whose storage was written since the save, with every such write (each
    one alone breaks the save: fixing the first leaves the next). Writes moving the version
    autograd checks come first; writes hidden from it only where there are none of those.
    Records in ``consumed`` (their graph was already differentiated and freed) are skipped."""
    for record in sorted(records, key=lambda r: r.id):
        if record.id in consumed:
            continue
        group = record.group
        writes = []
        if group.version > record.version:
            writes = group.writes_after(record.version, record.path)
        if not writes and group.hidden > record.hidden:
            writes = group.hidden_after(record.hidden, record.path)
        rebound: set[str] = set()
        for write in writes:
            if record.soft is not None and record.soft not in write.soft_through:
                continue  # written through the value itself, which may not be what was saved
            # after ``identity += out`` the name holds the in-place result; a later write
            # through it reaches the save only because of that one, so it is not its own
            if write.name is None or write.name not in rebound:
                yield write, record
            rebound |= write.rebinds


@dataclass
class Pending:
    """A write whose old value a later read may still want (a stale read), or whose hidden
    change a later read may use."""

    groups: frozenset[int]
    write: Any
    seq: int
    written_name: str | None
    written: list[Any] = field(default_factory=list)
    done: bool = False
    #: the loops the write sits in (innermost last) and the index it writes at, if any
    loops: tuple[int, ...] = ()
    target_node: Any = None
    #: written through a view: stale only once the in-place result is bound to another name
    through_view: bool = False
    bound_away: bool = False
    #: the target the in-place result was assigned to (``x_dict[key] = F.relu_(x)``): a read
    #: in a later assignment to that same target (``x_dict[key] = F.dropout(x)``) rebuilds
    #: it from the written tensor, which it wants as written
    bound_target: Any = None
    #: written in a state update: stale only for a second update through another name
    alias_only: bool = False
    #: a state update through an attribute under no_grad: stale only for a plain local name
    #: that took the very tensor before the write (``old_mean = self.mean``)
    snapshot_only: bool = False
    #: the element a loop took from these containers was written: by a procedure, every
    #: read of them wants the new value; otherwise the reads in ``meant_at`` (the nodes of
    #: the loops working through them)
    meant_for: frozenset[int] = frozenset()
    meant_at: tuple[frozenset[int], ...] | None = None

    def soft_alias(self, value: Held) -> bool:
        """``value`` and a written value may be copies of each other (``x.float()``)."""
        if any(value is w for w in self.written):
            return False  # the very tensor that was written, not a maybe-copy of it
        roots = {w.soft_of or w.id for w in self.written}
        return (value.soft_of or value.id) in roots and any(
            value.soft_of or w.soft_of for w in self.written
        )

    @property
    def bound_elsewhere(self) -> bool:
        return bool(self.write.elsewhere)

    def snapshot_read(self, name: str, values: list[Any]) -> bool:
        """A read of a plain local name that holds the very tensor this state update wrote
        (``old_mean = self.mean`` before ``self.mean.mul_(...)``)."""
        return holds_written(name, values, self.written_name, self.written)


def holds_written(
    name: str, values: list[Any], written_name: str | None, written: list[Any]
) -> bool:
    """``name`` is a plain local name other than ``written_name`` that holds one of the
    ``written`` tensors itself (not a view of it, nor beside another value)."""
    return (
        name != written_name
        and "." not in name
        and len(values) == 1
        and any(values[0] is v for v in written)
    )

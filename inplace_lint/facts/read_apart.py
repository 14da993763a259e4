"""Whether a read after an in-place write reads elements the write left alone.

A mixin of the expression evaluator: the indices a write went through and a read takes
(``s[:, i] = ...`` then ``s[:, i + 1]``), loops whose counter moves an index between the two,
and arms a loop takes at most once. The index comparison itself is ``index_disjoint``.
"""

from __future__ import annotations

import re

import libcst as cst

from inplace_lint.facts.index_disjoint import Located
from inplace_lint.facts.ledger import Pending as _Pending
from inplace_lint.facts.model import Value
from inplace_lint.facts.state import AnalyzerBase, _LoopFrame
from inplace_lint.facts.syntax import _index_texts, _mentions, _subscript_texts


class ReadApart(AnalyzerBase):
    """Index facts for telling a read of other elements from a stale read."""

    def _written_indices(self, pending: _Pending) -> list[Located] | None:
        """The index of each view a write went through (``a = e[:, 0]; a *= 2``), or the
        target's (``s[:, i] = ...`` on a tensor that is no view), each with its storage group;
        None where one is unknown."""
        found: list[Located] = []
        target = pending.target_node
        for value in pending.written:
            if value.index is not None:
                found.append((value.group.id, value.index))
            elif not value.view and isinstance(target, cst.Subscript):
                texts = _index_texts(self.module, target, self.table)
                if texts is None:
                    return None
                found.append((value.group.id, texts))
            else:
                return None
        return found

    def _iteration_frame(self, pending: _Pending) -> _LoopFrame | None:
        """The innermost loop around both the write and this read, when the write ran in an
        earlier iteration of it (None when it ran earlier in this same iteration)."""
        common = [frame for frame in self._loops if frame.key in pending.loops]
        if not common or pending.seq >= common[-1].started:
            return None
        return common[-1]

    def _other_iteration_element(self, pending: _Pending, node: cst.CSTNode) -> bool:
        """The write ran in an earlier iteration of a loop, at an index built from that loop's
        counter, and this read indexes by the same expression: another element.

        ``for c in range(n): buf[:, c] = ...; ... buf[:, c]`` reads column c+1 after column c
        was written. Only ``range`` counters (and ``enumerate``'s) count: they never repeat.
        """
        subscript = self._subscript_of.get(id(node))
        if subscript is None:
            return False
        frame = self._iteration_frame(pending)
        if frame is None or not frame.counters:
            return False
        written = _index_texts(self.module, pending.target_node, self.table)
        read = _subscript_texts(self.module, subscript)
        if written is None or len(read) != len(written):
            return False
        counters = frame.counters
        return any(
            mine == theirs and _mentions(part, counters)
            for mine, theirs, part in zip(read, written, subscript.slice, strict=True)
        )

    def _indices_moved(
        self, pending: _Pending, written: list[Located] | None, read: list[Located] | None
    ) -> bool:
        """The write ran in an earlier iteration of a loop around this read, and an index
        names something that loop rebinds (``buf[:, c]`` then ``buf[:, c - 1]`` a step
        later): the texts no longer say which elements they are."""
        texts = " ".join(t for _, index in (*(written or ()), *(read or ())) for t in index)
        names = set(_NAME.findall(texts))
        return any(
            frame.key in pending.loops
            and pending.seq < frame.started
            and names & (frame.bound | frame.counters)
            for frame in self._loops
        )

    def _read_texts(self, node: cst.CSTNode) -> tuple[str, ...] | None:
        """The index texts of the subscript this name read is the base of (``w[:, n:]``)."""
        subscript = self._subscript_of.get(id(node))
        return _subscript_texts(self.module, subscript) if subscript is not None else None

    def _apart_by_once_arm(self, pending: _Pending, values: list[Value]) -> bool:
        """The write ran in an earlier iteration on an arm the loop takes at most once
        (``if step == last:``), where the read's tensor reached it, and this read runs on
        that arm again: the two never meet."""
        frame = self._iteration_frame(pending)
        if frame is None:
            return False
        once = self._once_branches
        here = {once[b][:2] for b, arm in self._path if arm == 0 and b in once}
        write, checked = pending.write, False
        for value in values:
            if value.group.id not in pending.groups:
                continue
            path = value.group.write_paths.get(id(write), write.path)
            arms = [once[b] for b, arm in path if arm == 0 and b in once]
            last = any(loop == frame.key and only_last for loop, _, only_last in arms)
            if not last and not any(arm[:2] in here for arm in arms):
                return False  # no last-iteration arm, nor the once-only arm this read is on
            checked = True
        return checked


_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def read_indices(
    values: list[Value], pending: _Pending, texts: tuple[str, ...] | None
) -> list[Located] | None:
    """The index of each view a read takes of the written storage, with its group (for a
    tensor that is no view, the index this read takes of it, ``texts``: ``w[:, n:]``); None
    where one is not known."""
    found: list[Located] = []
    for value in values:
        if value.group.id not in pending.groups:
            continue
        index = value.index if value.index is not None else None if value.view else texts
        if index is None:
            return None
        found.append((value.group.id, index))
    return found

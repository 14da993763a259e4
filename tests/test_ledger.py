"""The autograd ledger alone: groups, versions, saves, backward points, pending writes.

No syntax is involved: writes are small stand-ins with a ``path``, nodes are plain strings.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from inplace_lint.facts import ledger
from inplace_lint.facts.ledger import Group, Pending, compatible, overwritten, save


@dataclass(eq=False)
class _Write:
    label: str
    path: ledger.Path = ()
    elsewhere: bool = False
    name: str | None = None
    rebinds: frozenset[str] = frozenset()


@dataclass(eq=False)
class _Held:
    id: int = field(default_factory=ledger.next_id)
    soft_of: int | None = None


def test_the_ledger_imports_no_syntax_tree_types() -> None:
    source = Path(ledger.__file__).read_text(encoding="utf-8")
    imported = {
        alias.name if isinstance(node, ast.Import) else node.module or ""
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [node])
    }
    assert not {name for name in imported if "libcst" in name or name.startswith("inplace_lint")}


def test_a_visible_write_moves_the_version_a_hidden_one_does_not() -> None:
    group = Group("x")
    group.bump(_Write("x.mul_(2)"), hidden=False)
    group.bump(_Write("x.data.zero_()"), hidden=True)
    assert (group.version, group.hidden) == (1, 1)
    assert [w.label for w in group.writes_after(0)] == ["x.mul_(2)"]
    assert [w.label for w in group.hidden_after(0)] == ["x.data.zero_()"]
    assert group.writes_after(1) == []


def test_a_backward_point_finds_every_write_after_each_save() -> None:
    """Each write alone breaks the save: fixing the first would leave the second."""
    group = Group("h")
    record = save(group, "sigmoid", "line 3", "result", "h", ())
    first, second = _Write("h.mul_(2)", name="h"), _Write("h.add_(1)", name="h")
    group.bump(first, hidden=False)
    group.bump(second, hidden=False)
    found = [(write, rec) for write, rec in overwritten([record], set())]
    assert found == [(first, record), (second, record)]


def test_a_write_through_a_name_an_earlier_write_rebound_is_not_its_own() -> None:
    """``h += 1`` binds ``h`` to the in-place result; made out of place, ``h`` would be a new
    tensor and ``h.relu_()`` would not reach the save: only the first write is reported."""
    group = Group("h")
    record = save(group, "conv", "line 3", "input", "h", ())
    first = _Write("h += 1", name="h", rebinds=frozenset({"h"}))
    group.bump(first, hidden=False)
    group.bump(_Write("h.relu_()", name="h"), hidden=False)
    assert [(write, rec) for write, rec in overwritten([record], set())] == [(first, record)]


def test_a_save_after_the_write_is_not_overwritten() -> None:
    group = Group("h")
    group.bump(_Write("h.relu_()"), hidden=False)
    record = save(group, "tanh", "line 4", "input", "h", ())
    assert list(overwritten([record], set())) == []


def test_consumed_records_belong_to_a_graph_already_differentiated() -> None:
    group = Group("h")
    record = save(group, "exp", "line 2", "result", "h", ())
    group.bump(_Write("h.zero_()"), hidden=False)
    assert list(overwritten([record], {record.id})) == []


def test_records_come_back_in_the_order_they_were_saved() -> None:
    a, b = Group("a"), Group("b")
    later = save(b, "exp", "line 5", "result", "b", ())
    earlier_made_first = save(a, "exp", "line 6", "result", "a", ())
    a.bump(_Write("a"), hidden=False)
    b.bump(_Write("b"), hidden=False)
    found = [rec for _, rec in overwritten([earlier_made_first, later], set())]
    assert found == [later, earlier_made_first]


def test_a_write_on_the_other_arm_of_a_branch_cannot_follow_the_save() -> None:
    group = Group("y")
    record = save(group, "sigmoid", "if arm", "result", "y", ((7, 0),))
    group.bump(_Write("else arm", path=((7, 1),)), hidden=False)
    assert list(overwritten([record], set())) == []
    group.bump(_Write("after the if", path=()), hidden=False)
    assert [w.label for w, _ in overwritten([record], set())] == ["after the if"]


def test_a_narrower_path_recorded_for_one_group_wins_over_the_writes_own() -> None:
    group = Group("y")
    record = save(group, "sigmoid", "if arm", "result", "y", ((7, 0),))
    write = _Write("y.mul_(2)")
    group.write_paths[id(write)] = ((7, 1),)  # the name held y only after the else arm
    group.bump(write, hidden=False)
    assert list(overwritten([record], set())) == []


def test_compatible_paths() -> None:
    assert compatible(((1, 0),), ((1, 0), (2, 1)))
    assert not compatible(((1, 0),), ((1, 1),))
    assert compatible((), ((3, 1),))


def test_pending_soft_alias_and_bound_elsewhere() -> None:
    base = _Held()
    maybe_copy = _Held(soft_of=base.id)
    pending = Pending(frozenset({1}), _Write("x.add_(1)", elsewhere=True), 5, "x", [base])
    assert pending.soft_alias(maybe_copy)
    assert not pending.soft_alias(base)  # the very tensor written
    assert not pending.soft_alias(_Held())
    assert pending.bound_elsewhere

"""Module parameter groups in the ledger: a submodule's parameters are also its owner's.

A save of the owner's parameters (its forward) is broken by a write to any submodule's; a
save of one submodule's is broken by a write to all of the owner's (an optimizer over
``model.parameters()``), and not by a write to a sibling's.
"""

from __future__ import annotations

from dataclasses import dataclass

from inplace_lint.facts import ledger
from inplace_lint.facts.ledger import Group, overwritten, save


@dataclass(eq=False)
class _Write:
    label: str
    path: ledger.Path = ()
    elsewhere: bool = False
    name: str | None = None
    rebinds: frozenset[str] = frozenset()


def _model() -> tuple[Group, Group, Group]:
    owner, first, second = Group("model"), Group("model.g"), Group("model.d")
    owner.adopt(first)
    owner.adopt(second)
    return owner, first, second


def _broken(record: ledger.SaveRecord) -> list[str]:
    return [write.label for write, _ in overwritten([record], set())]


def test_a_step_over_one_submodule_breaks_the_owners_save_and_not_a_siblings() -> None:
    owner, first, second = _model()
    whole, sibling = (
        save(owner, "forward", "n1", "parameters", "model", ()),
        save(second, "forward", "n2", "parameters", "model.d", ()),
    )
    first.bump(_Write("step g"), hidden=False)
    assert _broken(whole) == ["step g"]
    assert _broken(sibling) == []


def test_a_step_over_the_owner_breaks_every_submodules_save() -> None:
    owner, first, second = _model()
    records = [save(g, "forward", "n", "parameters", g.name, ()) for g in (first, second)]
    owner.bump(_Write("step all"), hidden=False)
    assert [_broken(r) for r in records] == [["step all"], ["step all"]]


def test_a_hidden_write_moves_only_the_hidden_counters_of_the_family() -> None:
    owner, first, _ = _model()
    first.bump(_Write("data write"), hidden=True)
    assert (owner.version, owner.hidden, first.version, first.hidden) == (0, 1, 0, 1)

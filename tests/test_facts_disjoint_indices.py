"""Views of one tensor made by basic indices that provably differ (``s[:, i]`` and
``s[:, i + 1]``, ``e[:, 0]`` and ``e[:, 1]``) do not overlap: a write through one is no stale
read through the other. Reduced from fairseq's NAT word-swap noise (corpora relint). Every
program is run with torch.
"""

from __future__ import annotations

from programs import codes, run

from inplace_lint.facts.index_disjoint import disjoint_indices

SWAP = """
import torch


def swap(n):
    s = torch.randint(0, 5, (2, 4))
    for i in range(n - 1):
        next_word = s[:, i + 1]
        self_word = s[:, i].clone()
        s[:, {first}] = self_word * 2 + next_word
        s[:, {second}] = next_word * 3 + self_word
    return s


swapped = swap(3)
"""


def test_a_neighbouring_column_is_another_element() -> None:
    source = SWAP.format(first="i", second="i + 1")
    assert codes(source) == []
    run(source)


def test_the_same_column_read_again_is_still_stale() -> None:
    source = SWAP.format(first="i + 1", second="i")
    assert [code for _, code in codes(source)] == ["IPL002"]


def test_which_index_texts_are_disjoint() -> None:
    assert disjoint_indices([(":", "i")], [(":", "i + 1")])
    assert disjoint_indices([(":", "0")], [(":", "1")])
    assert disjoint_indices([("k - 1", ":")], [("k", ":")])
    assert not disjoint_indices([(":", "i")], [(":", "j")])
    assert not disjoint_indices([(":", "i")], [(":", "i")])
    assert not disjoint_indices([(":", "0")], [("0", ":")])
    assert not disjoint_indices([("0",)], [(":", "1")])
    assert not disjoint_indices([], [(":", "1")])
    assert not disjoint_indices(None, [(":", "1")])

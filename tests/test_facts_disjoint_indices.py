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
    def disjoint(written: list[tuple[str, ...]] | None, read: list[tuple[str, ...]]) -> bool:
        on_one = None if written is None else [(0, w) for w in written]
        return disjoint_indices(on_one, [(0, r) for r in read])

    assert disjoint([(":", "i")], [(":", "i + 1")])
    assert disjoint([(":", "0")], [(":", "1")])
    assert disjoint([("k - 1", ":")], [("k", ":")])
    assert disjoint([(":batch",)], [("batch:",)])
    assert disjoint([("1:n",)], [(":1",)])
    assert not disjoint([(":batch",)], [(":batch",)])
    assert not disjoint([(":", "i")], [(":", "j")])
    assert not disjoint([(":", "i")], [(":", "i")])
    assert not disjoint([(":", "0")], [("0", ":")])
    assert not disjoint([("0",)], [(":", "1")])
    assert not disjoint([], [(":", "1")])
    assert not disjoint(None, [(":", "1")])
    # only indices of one storage are compared: another tensor's write says nothing here
    assert disjoint_indices([(1, (":b",)), (2, (":", "0"))], [(1, ("b:",))])
    assert not disjoint_indices([(2, (":", "0"))], [(1, ("b:",))])


HALVES = """
import torch
import torch.nn as nn
from kornia_utils import maybe_compile


class Detector(nn.Module):
    def __init__(self, subpix_module):
        super().__init__()
        self.subpix = maybe_compile(subpix_module)

    def _refine_minmax(self, response: torch.Tensor, batchable: bool):
        if batchable:
            batch = response.shape[0]
            values = self.subpix(torch.cat((response, -response), dim=0))
            return values[:batch], values[batch:]
        return self.subpix(response), self.subpix(-response)

    def forward(self, oct_resp: torch.Tensor, batchable: bool):
        response_max, response_min = self._refine_minmax(oct_resp, batchable)
        response_max[:, 0] = 0.0
        response_min[:, 0] = 0.0
        return torch.where(response_min > response_max, response_min, response_max)
"""


def test_the_two_halves_of_one_tensor_do_not_overlap() -> None:
    """kornia's scale-space detector: the maxima's and minima's responses are the two halves
    of one batched refinement, each zeroed at its border (the other arm's separate results
    are other storage, whose written index says nothing of these halves)."""
    assert codes(HALVES) == []
    program = HALVES.replace("from kornia_utils import maybe_compile\n", "")
    call = (
        "def maybe_compile(module):\n    return module\n"
        "r = torch.randn(2, 3)\n"
        "out = Detector(lambda t: t * 2)(r, True)\n"
        "twin = Detector(lambda t: t * 2)(r, False)\n"
    )
    scope = run(program + call)
    assert scope["torch"].equal(scope["out"], scope["twin"])

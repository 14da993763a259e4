"""A read of ``xs[j]`` right after ``xs[j] = v`` gives ``v``, while the names in the index keep
their values, nothing else changed the list and the read is on the store's branch path (round
32, YOLACT's FPN: ``out[j] = pred_layer(out[j])`` then ``F.relu(out[j], inplace=True)``
writes the convolution's fresh output, not the sigmoid-like maps the list held before). The
programs are run with torch.
"""

from __future__ import annotations

from programs import behave, codes

FPN = """
import torch
import torch.nn.functional as F
from torch import nn


class FPN(nn.Module):
    def __init__(self):
        super().__init__()
        self.pred_layers = nn.ModuleList([nn.Conv2d(2, 2, 3, padding=1) for _ in range(3)])

    def forward(self, feats):
        out = []
        for feat in feats:
            out.append(torch.sigmoid(feat))
        j = len(feats)
        for pred_layer in self.pred_layers:
            j -= 1
            {store}
            {between}
            F.relu(out[j], inplace=True)
        return sum(o.sum() for o in out)


torch.manual_seed(0)
feats = [torch.randn(1, 2, 4, 4, requires_grad=True) for _ in range(3)]
FPN()(feats).backward()
"""

STORE = "out[j] = pred_layer(out[j])"


def test_a_read_right_after_a_store_at_the_same_index_gives_what_was_stored() -> None:
    safe = FPN.format(store=STORE, between="pass")
    assert codes(safe) == []
    hazard = FPN.format(store="pass", between="pass")
    assert codes(hazard) == [(21, "IPL001")]
    behave(hazard, safe)


def test_the_store_stops_counting_when_the_index_or_the_list_changes() -> None:
    moved = FPN.format(store=STORE, between="j = (j + 1) % 3")
    assert codes(moved) == [(21, "IPL001")]
    behave(moved)
    reordered = FPN.format(store=STORE, between="out.insert(0, out.pop())")
    assert codes(reordered) == [(21, "IPL001")]
    behave(reordered)

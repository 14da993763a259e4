"""An in-place op on a view joins its base's graph: what it saved is broken by a later write to
any view of the same storage, disjoint or not, since they share one version counter (round
32, Ultralytics' pose decode: ``y[:, 2::ndim].sigmoid_()`` then ``y[:, 0::ndim] = ...``).
And ``x[i] = torch.cat((cv2(x[i]), cv3(x[i])), 1)`` replaces an element of a list, as
``maps[k] = block(maps[k])`` does (the same file's detection head). The programs are run with
torch.
"""

from __future__ import annotations

from programs import behave, codes, run

DECODE = """
import torch


def kpts_decode(kpts, ndim=3):
    y = kpts.clone()
    {visibility}
    y[:, 0::ndim] = y[:, 0::ndim] * 2.0
    return y


k = torch.randn(2, 6, requires_grad=True)
kpts_decode(k).sum().backward()
"""


def test_a_save_made_on_a_view_is_broken_by_a_write_to_a_sibling_view() -> None:
    hazard = DECODE.format(visibility="y[:, 2::ndim].sigmoid_()")
    assert codes(hazard) == [(8, "IPL001")]
    fixed = DECODE.format(visibility="y[:, 2::ndim] = y[:, 2::ndim].sigmoid()")
    assert codes(fixed) == []
    behave(hazard, fixed)


HEAD = """
import torch
from torch import nn


class Detect(nn.Module):
    def __init__(self, ch=(4, 4)):
        super().__init__()
        self.cv2 = nn.ModuleList(nn.Conv2d(c, 2, 1) for c in ch)
        self.cv3 = nn.ModuleList(nn.Conv2d(c, 3, 1) for c in ch)
        self.cv4 = nn.ModuleList(nn.Conv2d(c, 5, 1) for c in ch)

    def forward(self, x):
        kpt = torch.cat([self.cv4[i](x[i]).flatten(2) for i in range(2)], -1)
        for i in range(2):
            x[i] = torch.cat((self.cv2[i](x[i]), self.cv3[i](x[i])), 1)
        return sum(xi.sum() for xi in x) + kpt.sum()


feats = [torch.randn(1, 4, 3, 3, requires_grad=True) for _ in range(2)]
Detect()(feats).backward()
"""


def test_an_element_rebuilt_from_calls_on_it_is_a_list_item_replaced() -> None:
    assert codes(HEAD) == []
    run(HEAD)  # the caller's feature tensors are not written: backward runs

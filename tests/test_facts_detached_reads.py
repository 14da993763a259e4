"""A tensor written through ``.data`` and then rebound to its own ``.detach()`` is read
afterwards as a constant: no gradient flows through those reads, so the hidden write makes no
gradient wrong there (easyocr's DBNet loss builds its targets so). A read of the graph tensor
itself is still reported. Every program is run with torch.
"""

from __future__ import annotations

import torch
from programs import codes, run

TARGETS = """
import torch

pred = torch.rand(6, requires_grad=True)
neg_sort, _ = torch.sort(pred * 1.0, descending=True)
neg_gt = neg_sort[:3].clone()
neg_gt.data.fill_(0)
neg_gt = {rebind}
tpred = torch.cat((pred[:3], neg_sort[:3]))
tgt = torch.cat((torch.ones(3), neg_gt))
loss = (tpred - tgt).pow(2).sum()
loss.backward()
"""


def test_a_target_built_through_data_then_detached() -> None:
    source = TARGETS.format(rebind="neg_gt.detach()")
    assert codes(source) == []
    scope = run(source)
    assert torch.equal(scope["tgt"][3:], torch.zeros(3))


def test_the_graph_tensor_read_again_is_still_reported() -> None:
    source = TARGETS.format(rebind="neg_gt * 1.0")
    assert codes(source) == [(7, "IPL007")]
    run(source)

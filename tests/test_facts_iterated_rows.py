"""Iterating a tensor unbinds it: each row is one of the views ``unbind`` returns, which torch
refuses to write in place while the tensor requires grad ('Output 0 of Select is a view and
is being modified inplace. This view is the output of a function that returns multiple
views'). Round 32, mmdetection3d's FreeAnchor loss (``for ... bbox_preds_ ... in zip(...,
bbox_preds, ...)`` over a concatenated prediction, then ``bbox_preds_[matched] = ...``);
earlier rounds' ScoreCAM and FlashTorch denormalisers. A parameter a loop iterates is left
alone: it is most often a list of tensors. The programs are run with torch.
"""

from __future__ import annotations

from programs import behave, codes

LOSS = """
import torch


def loss(preds, targets):
    bbox_preds = torch.cat([preds, preds], dim=1)
    total = 0
    {loop}
        {row}
        total = total + row.sum()
    return total


targets = torch.randn(2, 4)
loss(torch.randn(2, 2, requires_grad=True), targets).backward()
"""

WRITE = "row[0] = 0.0"
COPY = "row = row.clone()\n        row[0] = 0.0"


def test_a_write_to_a_row_of_an_iterated_tensor_is_refused() -> None:
    for loop in ("for row in bbox_preds:", "for row, t in zip(bbox_preds, targets):"):
        hazard = LOSS.format(loop=loop, row=WRITE)
        assert codes(hazard) == [(9, "IPL001")]
        safe = LOSS.format(loop=loop, row=COPY)
        assert codes(safe) == []
        behave(hazard, safe, match="is a view and is being modified inplace")


def test_an_iterated_parameter_is_taken_for_a_list() -> None:
    # not claimed as an unbound row; what a caller passes decides (here a leaf: IPL003)
    source = LOSS.format(loop="for row in preds:", row=WRITE)
    assert codes(source) == [(9, "IPL003")]
    behave(source, match="modified inplace")

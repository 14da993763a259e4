"""Iterating a tensor (``for row in x``) yields the views ``x.unbind(0)`` returns: one of
several views one call returned, which torch refuses to write in place with grad on when the
tensor or the values written require grad. Every program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes

ROWS = """
import torch

w = torch.randn(2, 3, requires_grad=True)
source = w * 2
batched = {batched}
for row in batched:
    {write}
"""


def test_writing_a_row_of_a_tensor_that_requires_grad() -> None:
    hazard = ROWS.format(batched="w * 3", write="row.mul_(2)")
    assert codes(hazard) == [(8, "IPL001")]
    behave(hazard, match="is a view and is being modified inplace")


def test_copying_values_that_require_grad_into_a_row() -> None:
    """torchvision's ``batch_images`` pads each image into a row of one batch tensor."""
    hazard = ROWS.format(batched="torch.zeros(2, 3)", write="row.copy_(source[0])")
    safe = ROWS.format(batched="torch.zeros(2, 3)", write="row.copy_(source[0].detach())")
    indexed = hazard.replace("for row in batched:\n    row", "for i in range(2):\n    batched[i]")
    assert codes(hazard) == [(8, "IPL001")]
    assert codes(safe) == []
    assert codes(indexed) == []
    behave(hazard, safe, indexed, match="output of a function that returns multiple views")

"""Writing a tensor that requires grad into a view of a multi-view op (rounds 18, 19, 34):

``for img, pad_img in zip(tensor_list, batch): pad_img[...].copy_(img)`` fills a plain
``torch.zeros`` batch row by row. Iterating the batch unbinds it, and torch refuses an
in-place write to one of those views as soon as the result would require grad: not only when
the batch does, but also when the copied image does (DETR's ``nested_tensor_from_tensor_list``,
detectron2's ``ImageList.from_tensors`` with images that require grad). Two facts were
missing:

- the write's own inputs were not looked at, only the written view's grad;
- a list of tensors passed to a helper gave the helper's parameter no grad at all, so its
  elements were "maybe" even when every call passes tensors that require grad.

Writing through ``batch[i]`` (a plain view) is clean, and so is the same loop when nothing
passed requires grad. The programs run with torch.
"""

from __future__ import annotations

from programs import behave, codes

PAD = """
from typing import List

import torch


def nested_tensor_from_tensor_list(tensor_list: List[torch.Tensor]):
    batch = torch.zeros(len(tensor_list), 3, 8, 8)
    for {target}:
        {write}
    return batch


patch = torch.rand(3, 6, 6, requires_grad={grad})
images = [patch * 2, patch + 1]
batch = nested_tensor_from_tensor_list(images)
batch.pow(2).sum().backward()
"""

ZIPPED = "img, pad_img in zip(tensor_list, batch)"
ROWS = "pad_img[:, : img.shape[1], : img.shape[2]].copy_(img)"
INDEXED = "i, img in enumerate(tensor_list)"
THROUGH_BATCH = "batch[i, :, : img.shape[1], : img.shape[2]].copy_(img)"
UNBIND_ERROR = "output of a function that returns multiple views"


def test_copying_an_image_that_requires_grad_into_an_unbound_row_raises() -> None:
    hazard = PAD.format(target=ZIPPED, write=ROWS, grad=True)
    assert codes(hazard) == [(10, "IPL001")]
    safe = PAD.format(target=INDEXED, write=THROUGH_BATCH, grad=True)
    assert codes(safe) == []
    behave(hazard, safe, match=UNBIND_ERROR)


def test_the_same_loop_over_images_without_grad_is_clean() -> None:
    source = PAD.format(target=ZIPPED, write=ROWS, grad=False).replace(
        "batch.pow(2).sum().backward()", "print(batch.sum())"
    )
    assert codes(source) == []
    behave(PAD.format(target=ZIPPED, write=ROWS, grad=True), source, match=UNBIND_ERROR)

"""A slice one step of a ``range`` counter wide (``x[i : i + 1]``, ``x[i * k : (i + 1) * k]``)
is another element in every iteration: a helper that writes the slice passed in one iteration
does not change what the next iteration reads (compressai's per-image ``_compress_ar``).
Every program is run with torch.
"""

from __future__ import annotations

from programs import codes, run

PER_ITEM = """
import torch
import torch.nn.functional as F


def quantize_rows(y_hat):
    for h in range(y_hat.size(1)):
        y_hat[:, h] = y_hat[:, h].round()
    return y_hat.sum()


def compress(y):
    y_hat = F.pad(y, (1, 1))
    strings = []
    for i in range(y.size(0)):
        strings.append(quantize_rows(y_hat[{index}]))
    return strings


first = compress(torch.randn(3, 2, 4))
"""


def test_one_element_slices_by_the_counter_are_disjoint() -> None:
    for index in ("i : i + 1", "i * 1 : (i + 1) * 1", "i"):
        source = PER_ITEM.format(index=index)
        assert codes(source) == [], index
        run(source)


def test_a_slice_two_steps_wide_overlaps_the_next_iteration() -> None:
    source = PER_ITEM.format(index="i : i + 2")
    assert [code for _, code in codes(source)] == ["IPL004"]

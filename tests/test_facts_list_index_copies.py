"""Indexing a tensor with a Python list gathers a copy (advanced indexing), also when the list
is a name bound to a list display or comprehension and grown by ``append``/``extend``
(open_clip's CoCa beam search: ``group_input_ids = input_ids[batch_group_indices]``, then
``input_ids[batch_group_indices] = group_input_ids[beam_idx]``, then ``group_input_ids`` read).
A slice index gives a view, whose later read after the write is stale. The programs run with
torch.
"""

from __future__ import annotations

import torch
from programs import codes, run

BEAMS = """
import torch


def reorder(input_ids, batch_size, beam_idx):
    for step in range(2):
        for group in range(2):
            batch_group_indices = {indices}
            for batch_idx in range(batch_size):
                batch_group_indices.extend([batch_idx * 2 + i for i in range(1)])
            group_input_ids = input_ids[{index}]
            input_ids[{index}] = group_input_ids[beam_idx]
            group_input_ids = torch.cat([group_input_ids[beam_idx, :], group_input_ids], dim=-1)
    return input_ids, group_input_ids


ids = torch.arange(12.0).view(4, 3)
out = reorder(ids, 2, torch.tensor([1, 0]))
"""


def test_a_list_index_gathers_a_copy() -> None:
    source = BEAMS.format(indices="[]", index="batch_group_indices")
    assert codes(source) == []
    run(source)


def test_a_slice_index_is_a_view_read_stale() -> None:
    source = BEAMS.format(indices="[]", index="0:2")
    assert (12, "IPL002") in codes(source)
    stale = run(source)["out"][1]
    fresh = run(source.replace("input_ids[0:2]\n", "input_ids[0:2].clone()\n"))["out"][1]
    assert not torch.equal(stale, fresh)

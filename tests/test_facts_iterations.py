"""Facts about loops and returns, each from the seventeenth session's measurements (round 24's
yolov4 loss, round 6's yolov5 loop, untuned run 21's curvlinops and texar, diffusers' tiled
decode in the chain): a later iteration holds another element, not the one an earlier
iteration kept; a procedure applied to each element of a list, or an accumulation the loop
reads back or the function returns, changes that list on purpose; a returned name keeps the
branch arms it held its tensor on. Every program is run with torch.
"""

from __future__ import annotations

import pytest
from programs import behave, codes, run

CLIPPED = """
import torch

torch.manual_seed(0)


def clip_coords(boxes, limit):
    boxes[:, 0].clamp_(0, limit)


def main():
    output = [torch.rand(3, 5) * 4, torch.rand(2, 5) * 4]
    stats, seen = [], []
    for pred in output:
        {before}
        clip_coords(pred, 1.0)
        {after}
    return torch.cat(stats), torch.cat(seen), torch.cat(output)


kept, seen, boxes = main()
"""


KEEP = "stats.append(pred[:, 0])\n        seen.append(pred[:, 0].clone())"


def test_a_later_iteration_holds_another_element_of_the_list() -> None:
    """Kept after the clip, each iteration's column is its own element's: the next
    iteration's clip writes another tensor. Kept before it, the clip changes it."""
    safe = CLIPPED.format(before="", after=KEEP)
    hazard = CLIPPED.format(before=KEEP, after="")
    assert codes(safe) == []
    assert codes(hazard) == [(8, "IPL004")]
    torch = pytest.importorskip("torch")
    assert torch.equal(run(safe)["kept"], run(safe)["seen"])
    assert not torch.equal(run(hazard)["kept"], run(hazard)["seen"])


def test_a_procedure_applied_to_each_element_changes_the_list_on_purpose() -> None:
    source = """
import torch


def normalize_(boxes):
    boxes.div_(boxes.amax())


def main():
    output = [torch.rand(3, 4) + 1, torch.rand(2, 4) + 1]
    for pred in output:
        normalize_(pred)
    return torch.cat(output)


boxes = main()
"""
    assert codes(source) == []
    assert float(run(source)["boxes"].max()) == 1.0  # what the caller reads is normalized


def test_a_forward_input_a_loop_iterates_holds_separate_tensors() -> None:
    """Round 24's yolov4 loss: ``for output in xin`` over the heads' outputs; the next
    head's output is another tensor than the one the last iteration's ``pow`` saved."""
    source = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class YoloLoss(nn.Module):
    def forward(self, xin, scale):
        loss = 0
        for output in xin:
            output = output.permute(0, 2, 1)
            output[..., 2:4] *= scale
            loss = loss + (output[..., :2] ** 2).sum()
        return loss


def main():
    head = nn.Linear(3, 4)
    xin = [head(torch.randn(2, 5, 3)), head(torch.randn(2, 6, 3))]
    YoloLoss()(xin, 0.5).backward()


main()
"""
    assert codes(source) == []
    run(source)


SCORED = """
import torch
from torch import nn

torch.manual_seed(0)


def luong_score(query, keys, scale):
    score = torch.matmul(query, keys.permute(0, 2, 1))
    if scale is not None:
        score = {scaled}
    return score


class LuongAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_g = nn.Parameter(torch.ones(()))
        self.attention_score_bias = nn.Parameter(torch.zeros(()))

    def forward(self, query, keys):
        score = luong_score(query, keys, self.attention_g)
        score += self.attention_score_bias
        return score


LuongAttention()(torch.randn(2, 1, 3), torch.randn(2, 4, 3)).sum().backward()
"""


def test_a_returned_name_keeps_the_arms_it_held_its_tensor_on() -> None:
    """texar's ``_luong_score``: ``mul`` saved the matmul result only on the arm that
    rebinds ``score`` to its own result, so the caller never holds what it saved."""
    safe = SCORED.format(scaled="scale * score")
    hazard = SCORED.format(scaled="torch.sigmoid(scale * score)")
    assert codes(safe) == []
    assert codes(hazard) == [(23, "IPL001")]
    behave(hazard, safe)


ACCUMULATED = """
import torch

torch.manual_seed(0)


def matmat(params, batches):
    JTM = []
    for p in params:
        JTM.append(torch.zeros_like(p))
    first = {first}
    for batch in batches:
        for JTM_p in JTM:
            JTM_p.add_(batch)
    started = first.sum()
    return JTM, started


params = [torch.randn(3), torch.randn(2)]
batches = [torch.tensor(1.0), torch.tensor(2.0)]
total, started = matmat(params, batches)
"""


def test_a_write_through_the_loop_target_is_meant_for_the_list() -> None:
    """curvlinops' ``_matmat``: accumulating into each element of ``JTM`` updates ``JTM``
    on purpose (the loop reads it again, the function hands it back); a name that kept an
    element before the loop sees the sums too."""
    hazard = ACCUMULATED.format(first="JTM[0]")
    safe = ACCUMULATED.format(first="JTM[0].clone()")
    assert codes(hazard) == [(14, "IPL002")]
    assert codes(safe) == []
    torch = pytest.importorskip("torch")
    assert float(run(safe)["started"]) == 0.0
    assert float(run(hazard)["started"]) == 9.0  # the sums, not the zeros it kept
    assert torch.equal(torch.cat(run(safe)["total"]), torch.cat(run(hazard)["total"]))


TILED = """
import torch

torch.manual_seed(0)


def blend_h(a, b, blend_extent):
    for x in range(blend_extent):
        b[:, x] = a[:, -blend_extent + x] * (1 - x / blend_extent) + b[:, x] * (x / blend_extent)
    return b


def tiled_decode(z):
    rows = []
    for i in range(2):
        row = []
        for j in range(3):
            row.append(torch.tanh(z[i, j]))
        rows.append(row)
    first = {first}
    result_rows = []
    for row in rows:
        result_row = []
        j = 0
        for tile in row:
            if j > 0:
                tile = blend_h(row[j - 1], tile, 2)
            result_row.append(tile[:, :3])
            j += 1
        result_rows.append(torch.cat(result_row, dim=-1))
    return torch.cat(result_rows, dim=0), first.sum()


decoded, first_sum = tiled_decode(torch.randn(2, 3, 4, 4))
"""


def test_a_helper_blending_each_tile_of_a_list_of_lists_works_through_the_list() -> None:
    """diffusers' tiled VAE decode: ``tile = blend_h(row[j - 1], tile)`` blends each tile
    into the one before it as the loop works through ``row`` (meant); a name that kept a
    tile of the second row before the loop sees it blended."""
    safe = TILED.format(first="rows[1][1].clone()")
    hazard = TILED.format(first="rows[1][1]")
    assert codes(safe) == []
    assert codes(hazard) == [(9, "IPL004")]
    torch = pytest.importorskip("torch")
    assert not torch.equal(run(safe)["first_sum"], run(hazard)["first_sum"])

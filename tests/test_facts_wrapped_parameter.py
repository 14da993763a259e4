"""A parameter rebound to a collection that wraps it (equiformer's ``feats = {"0":
feats[..., None]}``) was a tensor when it came in: the wrapping is no evidence that callers
pass a dict, so an in-place write to it before the wrapping (``feats += pos_emb``) still
writes the caller's tensor. A parameter rebound to a collection that does not mention it
(``feat_idx = [0]``) is still taken for a container. The programs run with torch.
"""

from __future__ import annotations

import pytest
from programs import codes, run

MODEL = """
import torch
import torch.nn as nn


class Equiformer(nn.Module):
    def __init__(self, dim=4, num_positions=5):
        super().__init__()
        self.pos_emb = nn.Embedding(num_positions, dim)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, feats):
        pos_emb = self.pos_emb(torch.arange(feats.shape[1]))
        feats {op} pos_emb[None, :, :]
        feats = {{"0": feats[..., None]}}
        return self.to_out(feats["0"][..., 0])


torch.manual_seed(0)
model = Equiformer()
feats = torch.randn(1, 5, 4)
with torch.no_grad():
    out1 = model(feats)
    out2 = model(feats)
"""


def test_a_parameter_wrapped_into_a_dict_was_the_callers_tensor() -> None:
    hazard = MODEL.format(op="+=")
    assert codes(hazard) == [(14, "IPL004")]
    scope = run(hazard)
    assert not scope["out1"].equal(scope["out2"])  # type: ignore[attr-defined]
    twin = run(MODEL.format(op="= feats +"))
    assert twin["out1"].equal(twin["out2"])  # type: ignore[attr-defined]
    assert codes(MODEL.format(op="= feats +")) == []


def test_a_parameter_rebound_to_an_unrelated_list_is_a_container() -> None:
    source = (
        MODEL.format(op="+=")
        .replace(
            'feats = {{"0": feats[..., None]}}'.replace("{{", "{").replace("}}", "}"),
            "feats = [0]",
        )
        .replace('self.to_out(feats["0"][..., 0])', "self.to_out(pos_emb)")
    )
    assert codes(source) == []


GROWN = """
import torch


def attend(scores, att_prev_list=None):
    if att_prev_list is None:
        att_prev_list = torch.ones_like(scores)
        att_prev_list = [att_prev_list / scores.shape[-1]]
    w = torch.softmax(scores + sum(att_prev_list), dim=-1)
    att_prev_list += [w]
    return w, att_prev_list

"""


def test_a_parameter_grown_by_a_list_is_a_list() -> None:
    # funasr's coverage attention: ``att_prev_list += [w]`` extends the caller's list
    assert codes(GROWN) == []
    torch = pytest.importorskip("torch")
    history = [torch.zeros(2, 5)]
    run(GROWN)["attend"](torch.randn(2, 5), history)  # type: ignore[operator]
    assert len(history) == 2

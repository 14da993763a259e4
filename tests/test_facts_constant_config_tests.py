"""Configuration tests every construction settles, with strings and ``and`` (Transformers4Rec,
rounds 31 and 34):

``ProjectionNetwork.forward`` returns ``self.tf_out_act(...)`` (``torch.tanh``, which keeps
its output) under ``if self.inp_merge == "mlp" and self.layer_norm_all_features:`` and
``self.merge(inp)`` otherwise. Every construction in the file passes ``"mlp"`` and ``True``, so
only the first arm runs, and nothing after its ``return``: the caller's write into a view of
the result breaks tanh's backward. Taken as "either arm", the forward's output was not saved
on every way out and the write went unseen. Built with ``"linear"`` instead, the forward
returns the linear layer's output, which nothing saved, and the same write is clean. The
programs run with torch.
"""

from __future__ import annotations

from programs import behave, codes

PROJECTION = """
import torch
from torch import nn


class ProjectionNetwork(nn.Module):
    def __init__(self, d, inp_merge, layer_norm_all_features, tf_out_act):
        super().__init__()
        self.inp_merge = inp_merge
        self.layer_norm_all_features = layer_norm_all_features
        self.tf_out_act = tf_out_act
        self.merge = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, inp):
        if self.inp_merge == "mlp" and self.layer_norm_all_features:
            return self.tf_out_act(self.merge(self.norm(inp)))
        elif self.inp_merge == "mlp":
            return self.tf_out_act(self.merge(inp))
        return self.merge(inp)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = ProjectionNetwork(4, "{merge}", True, torch.tanh)

    def forward(self, x, rows):
        pos_emb = self.proj(x)
        fake = pos_emb.view(-1, pos_emb.size(2))
        fake[rows, :] = 0.0
        return fake.sum() + pos_emb.pow(2).sum()


Model()(torch.randn(2, 3, 4), torch.tensor([0, 2])).backward()
"""


def test_the_arm_every_construction_takes_returns_what_tanh_saved() -> None:
    hazard = PROJECTION.format(merge="mlp")
    assert codes(hazard) == [(31, "IPL001")]
    safe = PROJECTION.format(merge="linear")
    assert codes(safe) == []
    behave(hazard, safe)

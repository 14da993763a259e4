"""``embeddings = embed(tokens) if inputs_embeds is None else inputs_embeds`` is the caller's
``inputs_embeds`` whenever one is passed, so a helper writing ``embeddings`` writes the
caller's tensor (round 30, torchtitan's ``scatter_vision_embeds`` into input embeddings that
are a leaf requiring grad, for attribution). A module call that passes no ``inputs_embeds``
(and no ``**kwargs``) shows the write reaches none of its caller's tensors. The programs are
run with torch.
"""

from __future__ import annotations

from programs import behave, codes

SCATTER = """
import torch
import torch.nn as nn


def scatter(inputs_embeds, *, vision_embeds):
    inputs_embeds[0:2] = vision_embeds[0:2]
    return inputs_embeds


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)

    def forward(self, tokens, inputs_embeds=None):
        embeddings = self.emb(tokens) if inputs_embeds is None else inputs_embeds
        return scatter(embeddings, vision_embeds=torch.randn(2, 4))


model = Model()
tokens = torch.tensor([1, 2, 3])
{call}
out.sum().backward()
"""


def test_the_parameter_on_the_arm_where_it_is_not_none_is_the_callers() -> None:
    leaf = "leaf = model.emb(tokens).detach().requires_grad_()\n"
    leaf += "out = model(tokens, inputs_embeds=leaf)"
    hazard = SCATTER.format(call=leaf)
    safe = SCATTER.format(call="out = model(tokens)")
    assert codes(hazard) == [(7, "IPL003")]
    assert codes(safe) == []
    behave(hazard, safe, match="leaf Variable that requires grad")

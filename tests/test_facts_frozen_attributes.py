"""A module's tensor frozen in ``__init__`` by ``self.embedding.weight.requires_grad = False``
needs no grad in every other method, so an op keeps it only for another input's gradient
(untuned run 29, MONAI Generative's EMA vector quantizer: ``(self.embedding.weight.t() **
2)`` then an EMA ``self.embedding.weight.data.copy_(...)``). The programs are run with torch.
"""

from __future__ import annotations

from programs import codes, run

CODEBOOK = """
import torch
from torch import nn


class Codebook(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(4, 3)
        {freeze}

    def forward(self, x):
        norms = (self.embedding.weight ** 2).sum()
        with torch.no_grad():
            self.embedding.weight.data.mul_(0.5)
        return x.sum() * norms


torch.manual_seed(0)
model = Codebook()
old = model.embedding.weight.detach().clone()
x = torch.randn(2, 3, requires_grad=True)
model(x).backward()
grad = model.embedding.weight.grad
"""


def test_a_tensor_frozen_in_init_needs_no_grad_elsewhere() -> None:
    frozen = CODEBOOK.format(freeze="self.embedding.weight.requires_grad = False")
    assert codes(frozen) == []
    assert run(frozen)["grad"] is None
    live = CODEBOOK.format(freeze="pass")
    assert codes(live) == [(15, "IPL007")]
    scope = run(live)
    expected = 2 * scope["old"] * scope["x"].sum()  # type: ignore[attr-defined,operator]
    assert not scope["grad"].allclose(expected)  # type: ignore[attr-defined]

"""``x.detach()`` of a tensor that needs no grad where it is taken (``if not x.requires_grad:
x = x.detach()``, tabicl's frozen-encoder path) is a plain alias: a write through it hides
nothing from autograd, so it is no IPL007. Every program is run with torch.
"""

from __future__ import annotations

from programs import codes, run

FROZEN = """
import torch
from torch import nn


class Interaction(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.cls = nn.Parameter(torch.randn(dim))
        self.out = nn.Linear(dim, 1)

    def forward(self, embeddings):
        if torch.is_grad_enabled() and not embeddings.requires_grad:
            embeddings = embeddings.detach()
        embeddings[:, 0] = self.cls
        return self.out(embeddings)


frozen = torch.randn(3, 2, 4)
Interaction()(frozen).sum().backward()
"""


def test_a_detach_of_a_tensor_that_needs_no_grad_there() -> None:
    assert codes(FROZEN) == []
    run(FROZEN)

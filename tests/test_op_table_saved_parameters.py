"""Which ``torch.nn`` modules' graphs keep their parameters, from the op table (seventeenth
session; round 24's coach trainer named an ``Embedding`` as saving its weight): the generator
moves each parameter's version counter before backward, as an optimizer step does, and an
``Embedding`` keeps only its indices. The program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes

STEPPED = """
import torch
import torch.nn as nn

torch.manual_seed(0)


def main():
    embedding = nn.Embedding(10, 4)
    head = nn.Linear(4, 2)
    optimizer = torch.optim.SGD({stepped}.parameters(), lr=0.1)
    out = head(embedding(torch.tensor([1, 2, 3])))
    out.sum().backward(retain_graph=True)
    optimizer.step()
    (out * out).sum().backward()


main()
"""


def test_an_embeddings_graph_keeps_its_indices_not_its_weight() -> None:
    """The op table says which modules' graphs keep their parameters (probed by moving
    each parameter's version before backward): ``Embedding`` keeps only the indices."""
    safe = STEPPED.format(stepped="embedding")
    hazard = STEPPED.format(stepped="head")
    assert codes(safe) == []
    assert codes(hazard) == [(14, "IPL001")]
    behave(hazard, safe)

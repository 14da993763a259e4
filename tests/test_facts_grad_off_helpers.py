"""A helper that turns its parameter's grad off before writing it (``out.requires_grad =
False``, ``out.requires_grad_(False)``, ``out.detach_()``), or writes it through an alias
autograd does not track (``out = out.detach()``), writes no leaf that requires grad,
whatever its caller passes (DistilBERT's ``create_sinusoidal_embeddings`` after
huggingface/transformers#9917, round 28). The programs are run with torch.
"""

from __future__ import annotations

import pytest
from programs import behave, codes, run

SINUSOIDAL = """
import math

import torch
import torch.nn as nn


def create_sinusoidal_embeddings(n_pos, dim, out):
    position_enc = torch.tensor(
        [[pos / math.pow(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)]
    )
    {before}
    out[:, 0::2] = torch.sin(position_enc[:, 0::2])
    out[:, 1::2] = torch.cos(position_enc[:, 1::2])


class Embeddings(nn.Module):
    def __init__(self, n_pos, dim):
        super().__init__()
        self.position_embeddings = nn.Embedding(n_pos, dim)
        create_sinusoidal_embeddings(n_pos, dim, out=self.position_embeddings.weight)

    def forward(self, position_ids):
        return self.position_embeddings(position_ids)


scale = torch.ones(4, requires_grad=True)
(Embeddings(6, 4)(torch.arange(6)) * scale).sum().backward()
"""


def test_a_helper_writing_the_callers_parameter_is_reported() -> None:
    hazard = SINUSOIDAL.format(before="pass")
    assert codes(hazard) == [(13, "IPL003"), (14, "IPL003")]
    behave(hazard, match="leaf Variable")


@pytest.mark.parametrize(
    "before",
    [
        "out.requires_grad = False",
        "out.requires_grad_(False)",
        "out.detach_()",
        "out = out.detach()",  # PyG's ``_post_process_mask`` (round 29)
        "out = out.data",
    ],
)
def test_a_helper_turning_grad_off_first_writes_no_leaf(before: str) -> None:
    safe = SINUSOIDAL.format(before=before)
    assert codes(safe) == []
    run(safe)


def test_grad_turned_off_on_one_arm_only_still_leaves_a_leaf() -> None:
    hazard = SINUSOIDAL.format(before="if n_pos > 100:\n        out.requires_grad = False")
    assert codes(hazard) == [(14, "IPL003"), (15, "IPL003")]
    behave(hazard, match="leaf Variable")

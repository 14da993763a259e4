"""Attributes read twice in one method.

Tacotron's location-sensitive attention reads ``self.cumulative`` (set in another method) into
a conv, which saves it, then adds to it in place: every read of ``self.cumulative`` in one
method is one value until the method rebinds it (``expressions._eval_attribute``). The
program runs under torch.
"""

from __future__ import annotations

import pytest

from tests.programs import IN_PLACE_ERROR, codes, run

LSA = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class LSA(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 2, 3, padding=1)
        self.cumulative = None

    def init_attention(self, b, t):
        self.cumulative = torch.zeros(b, t)

    def forward(self, scores, t):
        if t == 0:
            self.init_attention(*scores.shape)
        location = self.cumulative.unsqueeze(1)
        out = self.conv(location).sum(1) * scores
        UPDATE
        return out


lsa = LSA()
lsa(torch.rand(2, 5), 0).sum().backward()
"""


def test_an_attribute_read_twice_is_one_value() -> None:
    hazard = LSA.replace("UPDATE", "self.cumulative += scores")
    line = hazard.splitlines().index("        self.cumulative += scores") + 1
    assert codes(hazard) == [(line, "IPL001")]
    fixed = LSA.replace("UPDATE", "self.cumulative = self.cumulative + scores")
    assert codes(fixed) == []
    with pytest.raises(RuntimeError, match=IN_PLACE_ERROR):
        run(hazard)
    run(fixed)

"""A torch factory given ``out=`` writes that tensor in place (round 26's DimeNet
``BesselBasisLayer.reset_parameters``: ``torch.arange(1, n + 1, out=self.freq)`` into a
parameter with grad mode on, which torch refuses; PyG's fix writes it under no_grad and turns
its grad back on, as ``out=`` drops it). The programs are run with torch.
"""

from __future__ import annotations

from programs import behave, codes

BESSEL = """
import math

import torch


class BesselBasisLayer(torch.nn.Module):
    def __init__(self, num_radial):
        super().__init__()
        self.freq = torch.nn.Parameter(torch.empty(num_radial))
        self.reset_parameters()

    def reset_parameters(self):
        {reset}

    def forward(self, dist):
        return (self.freq * dist.unsqueeze(-1)).sin()


layer = BesselBasisLayer(4)
layer(torch.rand(3)).sum().backward()
"""


def test_a_factory_writing_out_into_a_parameter_is_a_leaf_write() -> None:
    hazard = BESSEL.format(reset="torch.arange(1, self.freq.numel() + 1, out=self.freq)")
    safe = BESSEL.format(
        reset="with torch.no_grad():\n"
        "            torch.arange(1, self.freq.numel() + 1, out=self.freq).mul_(math.pi)\n"
        "        self.freq.requires_grad_()"
    )
    assert codes(hazard) == [(14, "IPL003")]
    assert codes(safe) == []
    behave(hazard, safe, match="out=")

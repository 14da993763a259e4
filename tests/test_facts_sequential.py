"""What the members of an ``nn.Sequential`` save is saved when the Sequential runs, whichever
way its members are given.

An in-place member (``nn.ReLU(inplace=True)`` at the end of a block) writes a fresh
intermediate, which the chain check inside the Sequential judges; the output it saves is the
block's output, and a caller that writes that output in place (``out += residual``) breaks
backward. Every program here was run with torch: the hazards raise, the look-alikes do not.
"""

from __future__ import annotations

import textwrap

import pytest
from programs import behave, codes

BLOCK = """
import torch
from torch import nn


class ResidualBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.left = nn.Sequential(
            nn.Conv2d(c, c, 3, padding=1),
            nn.BatchNorm2d(c),
            {last},
        )

    def forward(self, x):
        out = self.left(x)
        {add}
        return out


m = ResidualBlock(4)
y = m(torch.randn(2, 4, 8, 8))
y.sum().backward()
"""


def _program(last: str, add: str = "out += x") -> str:
    return textwrap.dedent(BLOCK).format(last=last, add=add)


#: Blocks whose last member saves its output.
SAVING_LAST = ["nn.ReLU(inplace=True)", "nn.ReLU()", "nn.LeakyReLU(0.2, inplace=True)"]
LOOK_ALIKES = [
    ("nn.ReLU(inplace=True)", "out = out + x"),  # out of place
    ("nn.Dropout(0.0)", "out += x"),  # the last member saves no output
]


@pytest.mark.parametrize("last", SAVING_LAST)
def test_writing_the_output_of_a_block_that_ends_in_a_saving_activation(last: str) -> None:
    assert codes(_program(last)) == [(17, "IPL001")]


@pytest.mark.parametrize(("last", "add"), LOOK_ALIKES)
def test_look_alikes_stay_quiet(last: str, add: str) -> None:
    assert codes(_program(last, add)) == []


def test_the_programs_behave_as_labelled() -> None:
    safe = [_program(last, add) for last, add in LOOK_ALIKES]
    for last in SAVING_LAST:
        behave(_program(last), *safe)


WRAPPED = """
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos_conv = nn.Conv1d(8, 8, 3, padding=1)
        self.pos_conv = nn.Sequential(self.pos_conv, nn.GELU())

    def forward(self, x):
        x_conv = self.pos_conv(x.transpose(1, 2))
        {add}
        return x


Encoder()(torch.randn(2, 5, 8)).sum().backward()
"""


def test_a_sequential_that_wraps_the_attributes_earlier_module() -> None:
    """``self.m = nn.Sequential(self.m, ...)`` reads the module assigned just before: it
    follows that assignment on the same path and holds it first (the conv that saves its
    input), rather than being a different module on another path (nothing known)."""
    hazard = textwrap.dedent(WRAPPED).format(add="x += x_conv.transpose(1, 2)")
    safe = textwrap.dedent(WRAPPED).format(add="x = x + x_conv.transpose(1, 2)")
    assert codes(hazard) == [(14, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


DEFAULTED = """
import torch
from torch import nn


class Discriminator(nn.Module):
    def __init__(self, activation=nn.LeakyReLU):
        super().__init__()
        self.first = nn.Sequential(
            nn.Conv2d(3, 4, 3), activation(inplace=True), nn.Dropout(p=0.5, inplace={inplace})
        )

    def forward(self, x):
        return self.first(x)


Discriminator()(torch.randn(1, 3, 8, 8)).sum().backward()
"""


def test_a_member_built_from_a_parameter_default() -> None:
    """``activation(inplace=True)`` under ``activation=nn.LeakyReLU``: the member is the
    default's module inside a Sequential too, as it is in ``self.act = activation(...)``."""
    hazard = textwrap.dedent(DEFAULTED).format(inplace="True")
    safe = textwrap.dedent(DEFAULTED).format(inplace="False")
    assert codes(hazard) == [(10, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


INSERTED = """
import torch
from torch import nn


class ConvReLU(nn.Module):
    def __init__(self, cin, cout, bn=True):
        super().__init__()
        layers = [{layers}]
        if bn:
            layers.insert({position}, nn.BatchNorm2d(cout))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return self.block(x)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = ConvReLU(2, 2)

    def forward(self, x):
        y = self.block(x)
        y += x
        return y


Decoder()(torch.randn(1, 2, 3, 3)).sum().backward()
"""
CONV_RELU = "nn.Conv2d(cin, cout, 1), nn.ReLU(inplace=True)"
RELU_CONV = "nn.ReLU(), nn.Conv2d(cin, cout, 1)"


def test_a_grown_sequential_ending_in_an_inplace_relu_keeps_its_output() -> None:
    """``layers.insert(1, bn)`` puts the BatchNorm between the conv and the ReLU, which stays
    last and keeps its output (segmentation_models.pytorch's Conv2dReLU, round 16); inserted
    at the end, or before a conv that ends the list, nothing keeps the output."""
    hazard = INSERTED.format(layers=CONV_RELU, position=1)
    assert codes(hazard) == [(25, "IPL001")]
    at_end = INSERTED.format(layers=CONV_RELU, position=2)
    conv_last = INSERTED.format(layers=RELU_CONV, position=1)
    assert codes(at_end) == codes(conv_last) == []
    behave(hazard, at_end, conv_last)

"""Values passed on: a module a class forwards to the classes it builds, an argument written by
a method of an instance, an argument handed on as a gathered copy.

- BigGAN's ``Discriminator(D_activation=nn.ReLU(inplace=True))`` stores its activation and
  builds ``DBlock(activation=self.activation)``: the block's ``self.activation`` is that
  in-place ReLU (``facts/constructed.py``).
- pixelNeRF's ``net.encode(images, focal)`` on an instance of a same-file class writes what
  it is passed as a helper's call would (``Steps._instance_method_writes``).
- FDS's ``features[labels <= label] = calibrate(features[labels <= label], ...)``: the mask
  gathers a copy, so ``calibrate``'s own write to its argument does not reach ``features``
  (``summaries._copied_on_the_way``).

Each program is run under torch: the hazard differs from its out-of-place twin.
"""

from __future__ import annotations

import pytest

from tests.programs import codes, run

BLOCKS = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, activation=None):
        super().__init__()
        self.activation = activation
        self.conv = nn.Conv2d(3, 3, 1)

    def forward(self, x):
        h = self.activation(x)
        return self.conv(h) + x


class Net(nn.Module):
    def __init__(self, act=ACT):
        super().__init__()
        self.act = act
        self.block = Block(activation=self.act)

    def forward(self, x):
        return self.block(x)


x = torch.randn(2, 3, 4, 4)
out = Net()(x.clone())
"""


def test_a_module_passed_on_from_self_is_the_constructions_module() -> None:
    hazard = BLOCKS.replace("ACT", "nn.ReLU(inplace=True)")
    line = hazard.splitlines().index("        h = self.activation(x)") + 1
    assert codes(hazard) == [(line, "IPL002")]
    assert codes(BLOCKS.replace("ACT", "nn.ReLU()")) == []
    torch = pytest.importorskip("torch")
    written = run(hazard)
    plain = run(BLOCKS.replace("ACT", "nn.ReLU()"))
    assert not torch.allclose(written["out"], plain["out"])  # type: ignore[arg-type]


ENCODE = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def encode(self, focal):
        focal.mul_(-1.0)
        return focal.sum()


def main():
    net = Net()
    focal = torch.ones(2, 2)
    total = net.encode(focal)
    return focal + total


result = main()
"""


def test_a_method_of_an_instance_writes_what_it_is_passed() -> None:
    line = ENCODE.splitlines().index("        focal.mul_(-1.0)") + 1
    assert codes(ENCODE) == [(line, "IPL004")]
    fixed = ENCODE.replace("focal.mul_(-1.0)", "focal = focal * -1.0")
    assert codes(fixed) == []
    torch = pytest.importorskip("torch")
    assert not torch.equal(run(ENCODE)["result"], run(fixed)["result"])  # type: ignore[arg-type]


SMOOTH = """
import torch


def calibrate(matrix, valid):
    matrix[:, valid] = matrix[:, valid] * 2.0
    return matrix


def smooth(features, labels):
    for label in torch.unique(labels):
        features[labels == label] = calibrate(features[labels == label], VALID)
    return features


def main():
    encoding = torch.ones(4, 3)
    labels = torch.tensor([0, 1, 0, 1])
    smoothed = smooth(encoding, labels)
    return encoding.sum() + smoothed.sum()


result = main()
"""


def test_a_gathered_copy_handed_on_keeps_the_callees_write() -> None:
    source = SMOOTH.replace("VALID", "torch.tensor([True, False, True])")
    lines = source.splitlines()
    write = next(i for i, t in enumerate(lines, 1) if t.startswith("        features[labels =="))
    assert codes(source) == [(write, "IPL004")]  # not also calibrate's own write
    assert float(run(source)["result"]) != 24.0  # type: ignore[arg-type]

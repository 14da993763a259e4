"""A function that replaces a parameter by a copy of itself on one arm of a branch
(``if not self.inplace: batch = batch.clone()``) handles the aliasing itself: with no caller
in the file to judge by, its write to the caller's tensor on the other arm is the caller's
choice, not an accident. A parameter rebound to anything but its own copy is judged as before.
Every program is run with torch.
"""

from __future__ import annotations

import torch
from programs import codes, run

MIXUP = """
import torch
from torch import nn


class RandomMixup(nn.Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, batch, target):
        if not self.inplace:
            batch = batch.clone()
            target = target.clone()
        batch_rolled = batch.roll(1, 0)
        lam = 0.3
        batch_rolled.mul_(1.0 - lam)
        batch.mul_(lam).add_(batch_rolled)
        target.mul_(lam)
        return batch, target
"""

USE = """
images = torch.rand(4, 3)
labels = torch.rand(4, 2)
before = images.clone()
mixed, mixed_labels = RandomMixup()(images, labels)
"""

MASKED = """
import torch
from torch import nn


class Gate(nn.Module):
    def forward(self, x, mask=None):
        if mask is not None:
            x = x * mask
        x.relu_()
        return x
"""


def test_a_module_that_copies_unless_asked_to_work_in_place() -> None:
    """torchvision's reference RandomMixup, as spikingjelly ships it (untuned run 12)."""
    assert codes(MIXUP) == []
    scope = run(MIXUP + USE)
    assert scope["images"].equal(scope["before"])  # the default copies
    assert not scope["images"].equal(scope["mixed"])


def test_a_parameter_rebound_to_another_value_is_still_the_callers() -> None:
    assert codes(MASKED) == [(10, "IPL004")]
    scope = run(MASKED + "\nx = torch.tensor([-1.0, 2.0])\ny = Gate()(x)\n")
    assert scope["x"].equal(torch.tensor([0.0, 2.0]))  # the caller's tensor changed

"""A parameter every same-file call fills with an instance of one same-file plain class is
that instance: calling it calls the class's ``__call__``, whose summarised writes act on what
the call passes (torchvision's keypoint flip handed to a training step as ``flip``, round 34:
the flip writes the caller's keypoints through a reshape view, and the step reads them again
for its target). With the transform's clone, the caller's keypoints are left alone. The
programs run with torch.
"""

from __future__ import annotations

import torch
from programs import codes, run

STEP = """
import torch


def flip_keypoints(keypoints, height):
    shape = keypoints.shape
    keypoints = keypoints{copy}.reshape(-1, 2)
    keypoints[..., 1] = height - 1 - keypoints[..., 1]
    return keypoints.reshape(shape)


class RandomFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, keypoints, height, force=False):
        if force or torch.rand(1).item() < self.p:
            return flip_keypoints(keypoints, height)
        return keypoints


def consistency_step(keypoints, flip):
    flipped = flip(keypoints, 8, force=True)
    return keypoints.sum(), flipped.sum()


def main():
    flip = RandomFlip(p=0.5)
    keypoints = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    return consistency_step(keypoints, flip)


target, flipped = main()
"""


def test_calling_a_passed_instance_applies_its_writes() -> None:
    source = STEP.format(copy="")
    assert codes(source) == [(8, "IPL004")]
    stale = run(source)["target"]
    assert not torch.equal(stale, run(STEP.format(copy=".clone()"))["target"])


def test_the_transform_that_clones_writes_nothing_of_the_callers() -> None:
    source = STEP.format(copy=".clone()")
    assert codes(source) == []
    assert float(run(source)["target"]) == 10.0

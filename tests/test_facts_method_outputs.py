"""A same-file module's method other than ``forward`` (``backbone.forward_head(x)``) whose
every return an op in it saved (a ReLU's output, or a view of it) gives its caller a tensor
that is saved for backward: an in-place write to it there breaks backward. Every program is
run with torch.
"""

from __future__ import annotations

from programs import behave, codes

HEAD = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_head = nn.Conv2d(3, 8, 1)
        self.act = nn.ReLU()
        self.flatten = nn.Flatten(1)

    def forward_head(self, x):
        x = self.conv_head(x).mean((2, 3), keepdim=True)
        x = self.act(x)
        return self.flatten(x)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        x = self.backbone.forward_head(x)
        x = F.dropout(x, p=0.5, inplace=True, training=self.training)
        return self.fc(x)


model = Classifier()
model(torch.randn(2, 3, 4, 4)).sum().backward()
"""


def test_a_write_to_what_a_submodule_method_saved_is_found() -> None:
    """MobileNetV4's head (round 21): dropout in place on the head ReLU's flattened output."""
    assert codes(HEAD) == [(28, "IPL001")]
    safe = HEAD.replace("inplace=True, ", "")
    assert codes(safe) == []
    behave(HEAD, safe)


def test_a_method_that_saves_on_one_path_only_says_nothing() -> None:
    either = HEAD.replace(
        "        x = self.act(x)\n", "        if x.shape[0] > 8:\n            x = self.act(x)\n"
    )
    assert codes(either) == []

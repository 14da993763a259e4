"""Iterating an ``nn.ModuleList`` yields its members: the torch modules (and same-file classes)
whose constructors the source shows, whether listed, built by a comprehension or appended; a
nested list of known members, in order, unpacks by position (``for conv, bn, act in
self.layers``). Every program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes, run

NESTED = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, hidden=8, layers=2):
        super().__init__()
        self.graph_layers = nn.ModuleList()
        for _ in range(layers):
            self.graph_layers.append(
                nn.ModuleList([nn.Linear(hidden, hidden), nn.BatchNorm1d(hidden), nn.ReLU()])
            )

    def forward(self, x):
        for lin, bn, act in self.graph_layers:
            identity = x
            x = act(bn(lin(x)))
            {residual}
        return x


Net()(torch.randn(4, 8)).sum().backward()
"""

ZIPPED = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.acts = nn.ModuleList([nn.ReLU() for _ in range(2)])
        self.lins = nn.ModuleList([nn.Linear(hidden, hidden) for _ in range(2)])

    def forward(self, x):
        for act, lin in zip(self.acts, self.lins):
            x = act(lin(x))
            {shift}
        return x


Net()(torch.randn(4, 8)).sum().backward()
"""


def test_a_nested_module_list_unpacked_by_position() -> None:
    """PyG's EGC example (round 19): ``x += identity`` right after the ReLU of each
    ``[conv, norm, act]`` triple writes the output ReLU saved."""
    hazard = NESTED.format(residual="x += identity")
    safe = NESTED.format(residual="x = x + identity")
    assert codes(hazard) == [(19, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


def test_members_of_zipped_module_lists() -> None:
    """QANet's encoder (round 19) zips its norm and conv lists; each member is known."""
    hazard = ZIPPED.format(shift="x += 1")
    safe = ZIPPED.format(shift="x = x + 1")
    assert codes(hazard) == [(15, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


def test_a_module_list_of_modules_that_save_nothing_it_returns() -> None:
    """Members that keep only their input (Linear) leave their output free to write."""
    source = ZIPPED.replace("nn.ReLU() for", "nn.Identity() for").format(shift="x += 1")
    assert codes(source) == []
    run(source)  # Identity returns Linear's output, which Linear did not save


SEQUENCE = """
import torch
from torch import nn


class Aligner(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.key_layers = nn.ModuleList([
            nn.Conv1d(dim, dim * 2, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv1d(dim * 2, dim, 1),
        ])

    def forward(self, keys):
        key_out = keys
        for layer in self.key_layers:
            key_out = layer(key_out)
        return key_out


Aligner()(torch.randn(2, 4, 5, requires_grad=True)).sum().backward()
"""


def test_members_that_differ_are_one_module_per_iteration() -> None:
    """naturalspeech2's aligner: the in-place ReLU writes the conv's output, which the conv
    did not keep; one iteration calls one member, so the conv's save of its input and the
    ReLU's write never meet at one call."""
    assert codes(SEQUENCE) == []
    run(SEQUENCE)

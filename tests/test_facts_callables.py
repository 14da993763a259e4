"""Torch functions held as values (``facts/callables.py``).

``self.act = F.relu``, ``getattr(F, "relu")``, ``getattr(F, activation)`` with every
construction passing ``activation="relu"`` (ConfGF's GIN, round 22), ``act = sigmoid``
imported from torch: calling the holder calls that function, whose saves come from the op
table. A holder that may be ``None`` on another path is still that function where it is
called. Each program runs under torch.
"""

from __future__ import annotations

import pytest

from tests.programs import IN_PLACE_ERROR, codes, run

NET = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import sigmoid

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, activation="softplus"):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        if isinstance(activation, str):
            self.act = HELD
        else:
            self.act = None

    def forward(self, x):
        h = self.lin(x)
        if self.act is not None:
            h = self.act(h)
        h += x
        return h


Net(activation=GIVEN)(torch.randn(2, 4)).sum().backward()
"""


@pytest.mark.parametrize(
    ("held", "given", "hazard"),
    [
        ("F.relu", '"relu"', True),
        ('getattr(F, "sigmoid")', '"relu"', True),
        ("getattr(F, activation)", '"relu"', True),  # every construction gives "relu"
        ("getattr(F, activation)", '"softplus"', False),  # softplus saves its input only
        ("sigmoid", '"relu"', True),
        ("F.softplus", '"relu"', False),
    ],
)
def test_a_held_torch_function_is_called_with_its_saves(
    held: str, given: str, hazard: bool
) -> None:
    source = NET.replace("HELD", held).replace("GIVEN", given)
    line = source.splitlines().index("        h += x") + 1
    assert codes(source) == ([(line, "IPL001")] if hazard else [])
    if hazard:
        with pytest.raises(RuntimeError, match=IN_PLACE_ERROR):
            run(source)
    else:
        run(source)


def test_two_constructions_giving_two_strings_leave_the_function_unknown() -> None:
    source = NET.replace("HELD", "getattr(F, activation)").replace("GIVEN", '"relu"')
    source += 'Net(activation="softplus")\n'
    assert codes(source) == []

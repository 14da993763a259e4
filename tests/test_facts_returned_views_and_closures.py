"""A view a same-file module's forward returns, written by the caller, also from a closure
(DI-engine's DDPPO world model, round 34; mmflow's RAFT block, round 14):

``EnsembleModel.forward`` ends ``mean, logvar = x.chunk(2, dim=2)`` and returns ``mean``;
its caller's ``y, _ = model(x)`` then ``y[:, :, r:] += state`` writes one of chunk's views,
which torch refuses with grad on. Two facts were missing:

- an element of the record a tuple-returning forward hands back is the very tensor the
  forward made: surely a tensor where that one is, and a multi-view op's view where it is;
- a function defined inside another reads the enclosing function's names as free names: a
  module the enclosing function was given (``model``) is that module inside ``def func(x)``.

Writing a clone, or adding out of place, is clean. The programs run with torch.
"""

from __future__ import annotations

from programs import behave, codes

ENSEMBLE = """
import torch
from torch import nn


class Ensemble(nn.Module):
    def __init__(self):
        super().__init__()
        self.nn1 = nn.Linear(3, 4)

    def forward(self, x):
        x = self.nn1(x)
        mean, logvar = x.chunk(2, dim=-1)
        return mean, torch.exp(logvar)


def jacobian_input(model, x):
    def func(z):
        y, _ = model(z)
        {write}
        return y

    return func(x)


def direct(model, x):
    y, _ = model(x)
    {write}
    return y


m = Ensemble()
inp = torch.randn(2, 3, requires_grad=True)
out = {call}(m, inp)
out.sum().backward()
"""

ADDED = "y = torch.cat([y[:, :1], y[:, 1:] + y[:, :1]], dim=1)"
MULTI_VIEW_ERROR = "returns multiple views"


def program(call: str, write: str) -> str:
    return ENSEMBLE.format(call=call, write=write)


def test_the_caller_writes_a_chunk_view_the_forward_returned() -> None:
    hazard = program("direct", "y[:, 1:] += y[:, :1]")
    assert codes(hazard) == [(28, "IPL001")]
    safe = program("direct", ADDED)
    assert codes(safe) == []
    behave(hazard, safe, match=MULTI_VIEW_ERROR)


def test_a_closure_reads_the_module_its_enclosing_function_was_given() -> None:
    hazard = program("jacobian_input", "y[:, 1:] += y[:, :1]")
    assert codes(hazard) == [(20, "IPL001")]
    safe = program("jacobian_input", ADDED)
    assert codes(safe) == []
    behave(hazard, safe, match=MULTI_VIEW_ERROR)

"""A function a class is given at construction and calls later is that function: a torch
function every construction passes (``Proj(torch.tanh)``, or the constructing class's own
``self.act = torch.tanh`` passed on: Transformers4Rec's ``tf_out_act``), and a same-file
function stored only where it is not None (``self.loss_fn = loss_fn if loss_fn is not None
else F.mse_loss``: TabNet's ``_train_batch`` given an RMSE loss, round 31). The programs are
run with torch.
"""

from __future__ import annotations

from programs import behave, codes

PROJECTION = """
import torch
from torch import nn


class Proj(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.merge = nn.Linear(4, 4)
        self.act = act

    def forward(self, x):
        return self.act(self.merge(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        {build}

    def forward(self, x):
        y = self.proj(x)
        y[0] = 0
        return y


Model()(torch.randn(2, 4)).sum().backward()
"""

REGRESSOR = """
import torch
import torch.nn.functional as F
from torch import nn


def rmse(y_pred, y_true):
    return torch.sqrt(F.mse_loss(y_pred, y_true))


class Regressor:
    def __init__(self, loss_fn=None):
        self.network = nn.Linear(4, 1)
        self.loss_fn = loss_fn if loss_fn is not None else F.mse_loss

    def train_batch(self, X, y):
        output = self.network(X)
        loss = self.loss_fn(output, y)
        loss -= 0.1 * output.abs().mean()
        loss.backward()


Regressor({given}).train_batch(torch.randn(8, 4), torch.randn(8, 1))
"""


def test_a_torch_function_given_at_construction_is_called_as_itself() -> None:
    passed = PROJECTION.format(build="self.proj = Proj(torch.tanh)")
    forwarded = PROJECTION.format(build="self.act = torch.tanh; self.proj = Proj(self.act)")
    for hazard in (passed, forwarded):
        assert codes(hazard) == [(23, "IPL001")]
    # a function that keeps nothing it returns: clean
    plain = PROJECTION.format(build="self.proj = Proj(torch.neg)")
    assert codes(plain) == []
    behave(passed, plain)
    behave(forwarded)


def test_a_function_stored_where_it_is_not_none_is_the_one_given() -> None:
    hazard = REGRESSOR.format(given="loss_fn=rmse")
    assert codes(hazard) == [(19, "IPL001")]
    default = REGRESSOR.format(given="")  # mse_loss keeps no output: ``-=`` is safe
    assert codes(default) == []
    behave(hazard, default)

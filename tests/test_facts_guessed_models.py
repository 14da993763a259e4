"""A parameter called like a function is taken for a model (its output requires grad, its
parameters are saved by the call), but not when it is called with no argument at all: a
thunk such as an optimizer's ``closure()`` runs a whole forward and backward and hands back a
number. Every program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes, run

MULTI_OPTIMIZER = """
import torch


class MultiOptimizer(torch.optim.Optimizer):
    def __init__(self, optimizers):
        self.optimizers = optimizers

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        for optimizer in self.optimizers:
            optimizer.step()
        return loss


model = torch.nn.Linear(3, 1)
optimizer = MultiOptimizer([torch.optim.SGD(model.parameters(), lr=0.1)])


def closure():
    optimizer.optimizers[0].zero_grad()
    loss = model(torch.ones(2, 3)).pow(2).sum()
    loss.backward()
    return loss


first = optimizer.step(closure)
second = closure()
"""

MODEL_GIVEN = """
import torch


def train_step(model, optimizer, x):
    loss = model(x).pow(2).sum()
    optimizer.step()
    loss.backward()
    return loss
"""
CALL = """
net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
sgd = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(2):  # the first step has no gradients yet and changes nothing
    train_step(net, sgd, torch.ones(2, 3))
"""


def test_a_closure_called_with_no_argument_is_no_model() -> None:
    """brevitas' MultiOptimizer (untuned run 12): the closure's backward ran before the
    sub-optimizers step."""
    assert codes(MULTI_OPTIMIZER) == []
    scope = run(MULTI_OPTIMIZER)
    assert scope["second"] < scope["first"]


def test_a_parameter_called_on_a_tensor_is_still_a_model() -> None:
    assert codes(MODEL_GIVEN) == [(7, "IPL001")]
    behave(MODEL_GIVEN + CALL, match="modified by an inplace operation")

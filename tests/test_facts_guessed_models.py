"""A parameter called like a function is taken for a model (its output requires grad, its
parameters are saved by the call), but not when it is called with no argument at all: a
thunk such as an optimizer's ``closure()`` runs a whole forward and backward and hands back a
number. Every program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes, run


def torch_equal(a: object, b: object) -> bool:
    import torch

    return bool(torch.equal(a, b))  # type: ignore[arg-type]


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


STEP_COUNTERS = """
import torch


class Ratio:
    def __call__(self, steps):
        return int(steps * 0.5)


def train_loop(ratio, world_size, total_iters):
    train_step = 0
    last_train = 0
    rates = []
    for iter_num in range(1, total_iters + 1):
        per_rank_gradient_steps = ratio(iter_num * 4 / world_size)
        train_step += world_size * per_rank_gradient_steps
        rates.append(train_step - last_train)
        last_train = train_step
    return rates
"""

RUNNING_TOTAL = """
import torch


def running_total(model, batches):
    total = model(torch.zeros(2))
    first = total
    for batch in batches:
        total += model(batch)
    return total - first
"""


def test_a_callable_given_no_tensor_may_give_a_number() -> None:
    """sheeprl's step counters (untuned run 14, 14 findings): ``ratio(steps / world_size)``
    hands back an int, so ``train_step += ...`` rebinds and ``last_train`` keeps its value."""
    assert codes(STEP_COUNTERS) == []
    scope = run(STEP_COUNTERS + "rates = train_loop(Ratio(), 2, 3)\n")
    assert scope["rates"] == [2, 4, 6]


def test_a_callable_given_a_tensor_still_gives_a_tensor() -> None:
    assert codes(RUNNING_TOTAL) == [(9, "IPL002")]
    call = "out = running_total(torch.nn.Linear(2, 2), [torch.ones(2)])\n"
    twin = RUNNING_TOTAL.replace("total += model(batch)", "total = total + model(batch)")
    assert not torch_equal(run(RUNNING_TOTAL + call)["out"], run(twin + call)["out"])


BASE_ENCODER = """
import torch
import torch.nn as nn


class BaseEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_linear = nn.Linear(4, 4)
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.out_mid = nn.Linear(4, 4)
"""

ENCODER = """
import torch
from base import BaseEncoder


class Encoder(BaseEncoder):
    def forward(self, hidden_states: torch.Tensor):
        hidden_states = self.input_linear(hidden_states)
        exported = []
        for idx, layer in enumerate(self.layers, start=1):
            hidden_states = layer(hidden_states)
            exported.append(hidden_states)
            if idx == 1:
                hidden_states += self.out_mid(hidden_states.clone())
        return torch.cat([*exported, hidden_states], dim=-1)
"""


def test_a_submodule_from_another_file_gives_a_tensor_for_a_tensor() -> None:
    """transformers' Granite Speech Plus encoder: ``self.input_linear`` and ``self.layers``
    come from a base class in another file; the mid-layer ``+=`` changes the hidden state
    ``exported`` holds."""
    assert codes(ENCODER) == [(14, "IPL002")]
    program = BASE_ENCODER + ENCODER.replace("from base import BaseEncoder\n", "")
    call = "out = Encoder()(torch.ones(1, 4))\n"
    twin = program.replace("hidden_states += self", "hidden_states = hidden_states + self")
    assert not torch_equal(run(program + call)["out"], run(twin + call)["out"])

"""Modules and constants a class is given at construction, and fills that pass no gradient.

``Policy(actor, critic)`` stores the critic it is given; the file's own constructions say it
is a ``Critic``, so an optimizer over ``critic.parameters()`` in ``__init__`` steps the module
``self.critic`` forwards through (``facts/constructed.py``). A ``.data`` fill of minus
infinity read only by softmax, exp or sigmoid changes no gradient (``facts/vanishing.py``).
Programs run under torch.
"""

from __future__ import annotations

import libcst as cst
import pytest

from inplace_lint.facts.names import ImportTable
from inplace_lint.facts.vanishing import minus_infinity
from tests.programs import behave, codes, run

POLICY = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, s, a):
        return self.net(torch.cat([s, a], dim=1))


class Policy:
    def __init__(self, actor, critic):
        self.actor = actor
        self.critic = critic
        self.critic_optim = torch.optim.SGD(critic.parameters(), lr=0.1)

    def learn(self, obs):
        a = self.actor(obs)
        q = self.critic(obs, a)
        critic_loss = (q ** 2).mean()
        actor_loss = -q.mean()
        critic_loss.backward(retain_graph=True)
        self.critic_optim.step()
        actor_loss.backward()
"""


def _program(construction: str) -> str:
    return POLICY + construction + "policy.learn(torch.randn(4, 3))\n"


def test_a_module_every_construction_passes_is_the_attribute() -> None:
    source = _program("actor = nn.Linear(3, 2)\npolicy = Policy(actor, Critic())\n")
    step = source.splitlines().index("        self.critic_optim.step()") + 1
    assert codes(source) == [(step, "IPL001")]
    twice = _program(
        "policy = Policy(nn.Linear(3, 2), critic=Critic())\n"
        "other = Policy(nn.Linear(3, 2), Critic())\n"
    )
    assert codes(twice) == [(step, "IPL001")]
    behave(source)


def test_a_parameter_whose_parameters_are_taken_is_a_module() -> None:
    """One construction passes its caller's argument, so the constructions say nothing;
    ``critic.parameters()`` in ``__init__`` still says the parameter is a module."""
    source = _program(
        "def build(critic):\n    return Policy(nn.Linear(3, 2), critic)\n\n\n"
        "policy = Policy(nn.Linear(3, 2), Critic())\n"
    )
    step = source.splitlines().index("        self.critic_optim.step()") + 1
    assert codes(source) == [(step, "IPL001")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('float("-inf")', True),
        ('-float("inf")', True),
        ("-math.inf", True),
        ("-1e9", True),
        ("torch.finfo(x.dtype).min", True),
        ("-torch.finfo(torch.float32).max", True),
        ("-1e3", False),
        ("0.0", False),
        ('float("nan")', False),
    ],
)
def test_minus_infinity_forms(text: str, expected: bool) -> None:
    module = cst.parse_module("import math\nimport torch\n")
    imports = ImportTable.from_statements(list(module.body[0].body) + list(module.body[1].body))
    assert minus_infinity(cst.parse_expression(text), imports) is expected


MASKED = """
import torch

torch.manual_seed(0)
lin = torch.nn.Linear(4, 4)
x = torch.randn(2, 4)
pad = torch.tensor([[False, True, False, True]] * 2)
e = lin(x)
e.data.masked_fill_(pad, FILL)
w = e.READ
w.sum().backward()
"""


@pytest.mark.parametrize("read", ["softmax(-1)", "exp()", "sigmoid()"])
def test_a_minus_infinity_fill_read_by_a_vanishing_op_is_clean(read: str) -> None:
    assert codes(MASKED.replace("FILL", 'float("-inf")').replace("READ", read)) == []
    assert codes(MASKED.replace("FILL", "0.0").replace("READ", read)) == [(9, "IPL007")]
    torch = pytest.importorskip("torch")
    for fill, same in (('float("-inf")', True), ("0.0", False)):
        hidden = run(MASKED.replace("FILL", fill).replace("READ", read))
        plain = run(
            MASKED.replace("FILL", fill)
            .replace("READ", read)
            .replace("e.data.masked_fill_(pad, ", "e = e.masked_fill(pad, ")
        )
        grads = (hidden["lin"].weight.grad, plain["lin"].weight.grad)  # type: ignore[attr-defined]
        assert torch.equal(*grads) is same

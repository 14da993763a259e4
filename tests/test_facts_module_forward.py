"""A same-file module called at module level: what its forward returns, element by element.

``main(x)`` on an actor-critic whose forward returns ``pi, q, q_pi`` is interpreted with
``self`` bound to ``main`` (``facts/inline.py``), so ``q_pi`` carries the save of
``main.q``'s weights, and a step of an optimizer over ``main.q.parameters()`` before
``pi_loss.backward()`` is IPL001, while a step over ``main.policy`` is not. The submodules come
from a same-file builder (``mlp(...)`` returns an ``nn.Sequential``). Each program runs
under torch.
"""

from __future__ import annotations

from tests.programs import behave, codes

ACTOR_CRITIC = """
import torch
import torch.nn as nn

torch.manual_seed(0)


def mlp(sizes, output_activation=None):
    layers = []
    for i in range(len(sizes) - 1):
        layers += [nn.Linear(sizes[i], sizes[i + 1])]
    if output_activation is not None:
        layers += [output_activation()]
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy = mlp([3, 8, 2], output_activation=nn.Tanh)
        self.q = mlp([5, 8, 1])

    def forward(self, x, a):
        pi = self.policy(x)
        q = self.q(torch.cat((x, a), dim=1)).squeeze(1)
        q_pi = self.q(torch.cat((x, pi), dim=1)).squeeze(1)
        return pi, q, q_pi


main = ActorCritic()
target = ActorCritic()
pi_optimizer = torch.optim.Adam(main.policy.parameters())
q_optimizer = torch.optim.Adam(main.q.parameters())
_, q, q_pi = main(torch.randn(8, 3), torch.randn(8, 2))
pi_loss = -q_pi.mean()
q_loss = (q ** 2).mean()
"""

Q_FIRST = (
    ACTOR_CRITIC
    + """
q_optimizer.zero_grad()
q_loss.backward()
q_optimizer.step()
pi_optimizer.zero_grad()
pi_loss.backward()
"""
)

PI_FIRST = (
    ACTOR_CRITIC
    + """
pi_optimizer.zero_grad()
pi_loss.backward()
pi_optimizer.step()
q_optimizer.zero_grad()
q_loss.backward()
"""
)


def test_a_step_of_the_submodule_an_element_went_through_is_ipl001() -> None:
    step = Q_FIRST.splitlines().index("q_optimizer.step()") + 1
    assert codes(Q_FIRST) == [(step, "IPL001")]
    assert codes(PI_FIRST) == []
    behave(Q_FIRST, PI_FIRST)

"""An optimizer built by a callable the file cannot name (``optimizer_class(self.qf1.parameters(),
lr=lr)``, the class a parameter defaults to) steps the parameters it was built over, and no
other module's: not those of a module whose name merely resembles the optimizer's. Every
program is run with torch.
"""

from __future__ import annotations

from programs import behave, codes, run

TRAINER = """
import torch
import torch.nn as nn
import torch.optim as optim


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))

    def forward(self, x):
        return self.net(x)


class Trainer:
    def __init__(self, qf1, qf2, optimizer_class=optim.Adam):
        self.qf1, self.qf2 = qf1, qf2
        self.qf1_optimizer = optimizer_class(self.qf1.parameters(), lr=0.1)
        self.qf2_optimizer = optimizer_class(self.qf2.parameters(), lr=0.1)

    def train_step(self, x):
        qf1_loss = self.qf1(x).pow(2).mean()
        qf2_loss = self.qf2(x).pow(2).mean()
        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()
        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()
        return qf1_loss.item(), qf2_loss.item()
"""

CALL = """
trainer = Trainer(Critic(), Critic())
for _ in range(2):
    losses = trainer.train_step(torch.randn(4, 3))
"""


def test_each_optimizer_steps_only_its_own_module() -> None:
    """rl_swiss's SAC (round 21): ``qf1_optimizer`` is not ``qf2``'s."""
    assert codes(TRAINER) == []
    assert len(run(TRAINER + CALL)["losses"]) == 2


def test_a_step_over_the_module_a_later_backward_needs_is_still_found() -> None:
    late = TRAINER.replace(
        "        qf1_loss.backward()\n        self.qf1_optimizer.step()\n",
        "        qf1_loss.backward()\n        self.qf2_optimizer.step()\n",
    )
    assert codes(late) == [(27, "IPL001")]
    behave(late + CALL, match="modified by an inplace operation")

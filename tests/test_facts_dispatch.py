"""An inherited method that calls methods the subclass defines is read as the subclass's
(round 13's skrl ``DeterministicModel.act``: ``actions = self.compute(states)`` is the
actor's Tanh network, and ``actions.clamp_(low, high)`` overwrites what Tanh saved). The
programs are run with torch.
"""

from __future__ import annotations

from programs import behave, codes, run

SKRL = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def compute(self, states):
        raise NotImplementedError

    def act(self, states):
        actions = self.compute(states)
        {clip}
        return actions


class DeterministicActor(Model):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1), nn.Tanh())

    def compute(self, states):
        return self.net(states)


class Critic(Model):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def compute(self, states):
        return states.sum(dim=1, keepdim=True)


policy = DeterministicActor()
actions = policy.act(torch.randn(5, 3))
actions.sum().backward()
"""


def test_an_inherited_method_calls_the_subclass_override() -> None:
    hazard = SKRL.format(clip="actions.clamp_(-0.5, 0.5)")
    safe = SKRL.format(clip="actions = actions.clamp(-0.5, 0.5)")
    assert codes(hazard) == [(12, "IPL001")]
    assert codes(safe) == []
    behave(hazard, safe)


def test_a_subclass_whose_override_saves_nothing_adds_no_finding() -> None:
    quiet = SKRL.format(clip="actions.clamp_(-0.5, 0.5)").replace(
        "policy = DeterministicActor()", "policy = Critic()"
    )
    quiet = quiet.replace("torch.randn(5, 3)", "torch.randn(5, 3, requires_grad=True)")
    quiet = quiet.replace("        return self.net(states)\n", "        return states[:, :1] * 2\n")
    assert codes(quiet) == []
    run(quiet)  # neither override saves what ``clamp_`` writes: torch runs it

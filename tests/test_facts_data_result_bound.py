"""A write through ``.data`` whose in-place result is bound to a new name is used as a new
tensor, so a later read of the written name wants the old value (round 27's
stable-baselines3 TD3: ``noise = action.data.normal_(0, policy_noise)`` overwrote the replay
actions the critic is then regressed on). A ``.data`` write left unbound, or bound to the
same name, is meant for the tensor. The programs are run with torch.
"""

from __future__ import annotations

import pytest
from programs import codes, run

TD3 = """
import torch


def critic(state, action):
    return (state * action).sum(dim=1)


def train_step(state, action, next_state):
    {noise}
    noise = noise.clamp(-0.5, 0.5)
    next_action = (next_state + noise).clamp(-1, 1)
    target_q = critic(next_state, next_action)
    current_q = critic(state, action)
    return current_q, target_q, action


torch.manual_seed(0)
state, action, next_state = torch.rand(4, 2), torch.rand(4, 2), torch.rand(4, 2)
replayed = action.clone()
current_q, target_q, seen = train_step(state, action, next_state)
"""


def test_a_data_write_bound_to_a_new_name_makes_the_old_name_stale() -> None:
    hazard = TD3.format(noise="noise = action.data.normal_(0, 0.2)")
    safe = TD3.format(noise="noise = action.data.clone().normal_(0, 0.2)")
    assert codes(hazard) == [(10, "IPL002")]
    assert codes(safe) == []
    torch = pytest.importorskip("torch")
    wrong, right = run(hazard), run(safe)
    assert not torch.equal(wrong["seen"], wrong["replayed"])  # the critic saw the noise
    assert torch.equal(right["seen"], right["replayed"])


def test_a_data_write_meant_for_the_tensor_stays_quiet() -> None:
    kept = TD3.format(noise="action.data.clamp_(0, 1)\n    noise = torch.randn_like(action)")
    rebound = TD3.format(noise="action = action.data.mul_(0.5)\n    noise = action * 0")
    assert codes(kept) == []
    assert codes(rebound) == []
    run(kept)
    run(rebound)

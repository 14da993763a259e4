# label: hazard raises
# why: the deterministic actor clips its actions with clamp_ on the Tanh output that TanhBackward saved, so the DDPG policy loss cannot be backpropagated to the actor
# source: https://github.com/Toni-SM/skrl/commit/277f383f979e917a259dc034f62ad464453ca990
from typing import Tuple, Union

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Box:
    """Minimal stand-in for gym.spaces.Box"""

    def __init__(self, low, high, shape):
        self.low = np.full(shape, low, dtype=np.float32)
        self.high = np.full(shape, high, dtype=np.float32)
        self.shape = shape


class Model(torch.nn.Module):
    def __init__(self, observation_space, action_space, device="cpu") -> None:
        super().__init__()
        self.observation_space = observation_space
        self.action_space = action_space
        self.device = device

    def compute(self, states, taken_actions=None):
        raise NotImplementedError

    def update_parameters(self, network: torch.nn.Module, polyak: float = 0) -> None:
        with torch.no_grad():
            for parameters, network_parameters in zip(self.parameters(), network.parameters()):
                parameters.data.mul_(1 - polyak)
                parameters.data.add_(polyak * network_parameters.data)


class DeterministicModel(Model):
    def act(self, states: torch.Tensor, taken_actions: Union[torch.Tensor, None] = None, inference=False) -> Tuple[torch.Tensor]:
        # map from observations/states to actions
        actions = self.compute(states.to(self.device),
                               taken_actions.to(self.device) if taken_actions is not None else taken_actions)
        # clip actions
        if isinstance(self.action_space, Box):
            actions.clamp_(self.action_space.low[0], self.action_space.high[0])  # <-- IPL001: clamps the Tanh output saved for backward
        return actions, None, None


class DeterministicActor(DeterministicModel):
    def __init__(self, observation_space, action_space, device="cpu"):
        super().__init__(observation_space, action_space, device)
        self.net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())

    def compute(self, states, taken_actions=None):
        return self.net(states)


class DeterministicCritic(DeterministicModel):
    def __init__(self, observation_space, action_space, device="cpu"):
        super().__init__(observation_space, action_space, device)
        self.net = nn.Sequential(nn.Linear(3 + 1, 16), nn.ReLU(), nn.Linear(16, 1))

    def compute(self, states, taken_actions=None):
        return self.net(torch.cat([states, taken_actions], dim=1))


action_space = Box(-0.5, 0.5, (1,))
policy = DeterministicActor(3, action_space)
critic = DeterministicCritic(3, None)
policy_optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)

sampled_states = torch.randn(8, 3)
actions, _, _ = policy.act(sampled_states)
critic_values, _, _ = critic.act(sampled_states, actions)
policy_loss = -critic_values.mean()
policy_optimizer.zero_grad()
policy_loss.backward()
policy_optimizer.step()

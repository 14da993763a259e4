# label: hazard silent
# why: `_source_to_angles` overwrites the source rows of the caller's states tensor in place (`states[is_source] = self.source_angles`), so after `states2proxy` the trajectory batch no longer contains source states and the later `is_source_batch` mask silently changes the trajectory-balance loss.
# source: https://github.com/alexhernandezgarcia/gflownet/commit/562671811f1eca3d93ca25d41133914c594e8e76
import math
from typing import List, Union

import torch
import torch.nn as nn

torch.manual_seed(0)


class ContinuousTorus:
    def __init__(self, n_dim=2):
        self.n_dim = n_dim

    def states2proxy(self, states):
        return states

    def states2policy(self, states):
        return torch.cat([torch.cos(states), torch.sin(states)], dim=-1)


class NonAcyclicContinuousTorus(ContinuousTorus):
    def __init__(self, n_dim=2):
        super().__init__(n_dim)
        self.source = torch.full((n_dim,), -1.0)
        self.source_angles = torch.zeros(n_dim)

    def is_source_batch(self, states: torch.Tensor) -> torch.Tensor:
        return torch.all(states == self.source, dim=1)

    def states2proxy(self, states):
        states = self._source_to_angles(states)
        return super().states2proxy(states)

    def states2policy(self, states):
        states = self._source_to_angles(states)
        return super().states2policy(states)

    def _source_to_angles(self, states: Union[List[List], torch.Tensor]) -> Union[List[List], torch.Tensor]:
        is_source = self.is_source_batch(states)
        if isinstance(states, list):
            for idx in range(len(states)):
                if is_source[idx]:
                    states[idx] = list(self.source_angles)
        else:
            states[is_source] = self.source_angles  # <-- IPL004
        return states


def proxy(x):
    # reward on the torus: von Mises-like bump around (1, 1)
    return torch.exp(torch.cos(x - 1.0).sum(-1))


def main():
    env = NonAcyclicContinuousTorus()
    policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 4))
    backward_policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 4))
    logZ = nn.Parameter(torch.tensor(0.5))

    # one trajectory per row: [source, s1, s2]
    states = torch.stack([env.source, torch.tensor([0.3, 2.0]), torch.tensor([1.1, 0.9])])
    next_states = torch.stack([torch.tensor([0.3, 2.0]), torch.tensor([1.1, 0.9]), torch.tensor([1.0, 1.2])])

    log_reward = torch.log(proxy(env.states2proxy(next_states[-1:])))
    reached = env.states2proxy(states)  # rewards of visited states for logging

    fw_out = policy(env.states2policy(states))
    mu, log_kappa = fw_out[:, :2], fw_out[:, 2:]
    steps = torch.remainder(next_states - env.states2proxy(states.clone()), 2 * math.pi)
    logp_f = (torch.exp(log_kappa) * torch.cos(steps - mu)).sum(-1)

    bw_out = backward_policy(env.states2policy(next_states))
    logp_b = (torch.exp(bw_out[:, 2:]) * torch.cos(steps - bw_out[:, :2])).sum(-1)
    # backward transitions into the source state are deterministic
    is_source = env.is_source_batch(states)
    logp_b = torch.where(is_source, torch.zeros_like(logp_b), logp_b)

    loss = (logZ + logp_f.sum() - log_reward.sum() - logp_b.sum()) ** 2
    loss.backward()
    return loss.detach(), is_source, logZ.grad, reached.detach()


loss, is_source, logz_grad, reached = main()

# label: safe
# why: the Polyak soft update writes the target networks in place (mul_ and add(out=)) under no_grad after both backward passes, and the target networks are only ever used under no_grad
# source: https://github.com/DLR-RM/stable-baselines3/pull/106 (commit dbe8cfceb6376c6915c657f91f7d25b23b6a8176)
import copy
from typing import Iterable

import torch as th
import torch.nn as nn
import torch.nn.functional as F

th.manual_seed(0)


def polyak_update(params: Iterable[th.nn.Parameter], target_params: Iterable[th.nn.Parameter], tau: float) -> None:
    with th.no_grad():
        for param, target_param in zip(params, target_params):
            target_param.data.mul_(1 - tau)
            th.add(target_param.data, param.data, alpha=tau, out=target_param.data)


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, act_dim), nn.Tanh())

    def forward(self, obs):
        return self.mu(obs)


class ContinuousCritic(nn.Module):
    def __init__(self, obs_dim, act_dim, n_critics=2):
        super().__init__()
        self.q_networks = nn.ModuleList(
            [nn.Sequential(nn.Linear(obs_dim + act_dim, 16), nn.ReLU(), nn.Linear(16, 1)) for _ in range(n_critics)]
        )

    def forward(self, obs, actions):
        qvalue_input = th.cat([obs, actions], dim=1)
        return tuple(q_net(qvalue_input) for q_net in self.q_networks)

    def q1_forward(self, obs, actions):
        return self.q_networks[0](th.cat([obs, actions], dim=1))


class TD3:
    def __init__(self, obs_dim, act_dim, tau=0.005, gamma=0.99, policy_delay=2):
        self.actor = Actor(obs_dim, act_dim)
        self.actor_target = copy.deepcopy(self.actor)
        self.critic = ContinuousCritic(obs_dim, act_dim)
        self.critic_target = copy.deepcopy(self.critic)
        self.actor_optimizer = th.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.critic_optimizer = th.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.tau, self.gamma, self.policy_delay = tau, gamma, policy_delay
        self._n_updates = 0

    def train(self, gradient_steps, batches):
        for step in range(gradient_steps):
            self._n_updates += 1
            obs, actions, rewards, next_obs, dones = batches[step]
            with th.no_grad():
                noise = (th.randn_like(actions) * 0.2).clamp(-0.5, 0.5)
                next_actions = (self.actor_target(next_obs) + noise).clamp(-1, 1)
                next_q_values = th.cat(self.critic_target(next_obs, next_actions), dim=1)
                next_q_values, _ = th.min(next_q_values, dim=1, keepdim=True)
                target_q_values = rewards + (1 - dones) * self.gamma * next_q_values

            current_q_values = self.critic(obs, actions)
            critic_loss = sum(F.mse_loss(current_q, target_q_values) for current_q in current_q_values)
            self.critic_optimizer.zero_grad()
            critic_loss.backward()
            self.critic_optimizer.step()

            if self._n_updates % self.policy_delay == 0:
                actor_loss = -self.critic.q1_forward(obs, self.actor(obs)).mean()
                self.actor_optimizer.zero_grad()
                actor_loss.backward()
                self.actor_optimizer.step()

                polyak_update(self.critic.parameters(), self.critic_target.parameters(), self.tau)
                polyak_update(self.actor.parameters(), self.actor_target.parameters(), self.tau)
        return critic_loss


agent = TD3(obs_dim=3, act_dim=2)
batches = [
    (th.randn(8, 3), th.rand(8, 2) * 2 - 1, th.randn(8, 1), th.randn(8, 3), th.zeros(8, 1))
    for _ in range(2)
]
critic_loss = agent.train(2, batches)
actor = agent.actor
actor_target = agent.actor_target
critic_target = agent.critic_target

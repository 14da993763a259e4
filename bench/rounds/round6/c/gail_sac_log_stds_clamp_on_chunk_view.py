# label: hazard raises
# why: log_stds is one of the views returned by chunk(), and clamp_() modifies it in place; autograd forbids in-place changes to outputs of multi-view functions, so SAC's actor update raises.
# source: https://github.com/toshikwa/gail-airl-ppo.pytorch/issues/13 (gail_airl_ppo/network/policy.py StateDependentPolicy.sample)
import math

import torch
from torch import nn
from torch.optim import Adam

torch.manual_seed(0)


def build_mlp(input_dim, output_dim, hidden_units=(64, 64),
              hidden_activation=nn.Tanh(), output_activation=None):
    layers = []
    units = input_dim
    for next_units in hidden_units:
        layers.append(nn.Linear(units, next_units))
        layers.append(hidden_activation)
        units = next_units
    layers.append(nn.Linear(units, output_dim))
    if output_activation is not None:
        layers.append(output_activation)
    return nn.Sequential(*layers)


def calculate_log_pi(log_stds, noises, actions):
    gaussian_log_probs = (-0.5 * noises.pow(2) - log_stds).sum(
        dim=-1, keepdim=True) - 0.5 * math.log(2 * math.pi) * log_stds.size(-1)
    return gaussian_log_probs - torch.log(
        1 - actions.pow(2) + 1e-6).sum(dim=-1, keepdim=True)


def reparameterize(means, log_stds):
    noises = torch.randn_like(means)
    us = means + noises * log_stds.exp()
    actions = torch.tanh(us)
    return actions, calculate_log_pi(log_stds, noises, actions)


def soft_update(target, source, tau):
    for t, s in zip(target.parameters(), source.parameters()):
        t.data.mul_(1.0 - tau)
        t.data.add_(tau * s.data)


def disable_gradient(network):
    for param in network.parameters():
        param.requires_grad = False


class StateDependentPolicy(nn.Module):
    def __init__(self, state_shape, action_shape, hidden_units=(256, 256),
                 hidden_activation=nn.ReLU(inplace=True)):
        super().__init__()
        self.net = build_mlp(
            input_dim=state_shape[0],
            output_dim=2 * action_shape[0],
            hidden_units=hidden_units,
            hidden_activation=hidden_activation
        )

    def forward(self, states):
        return torch.tanh(self.net(states).chunk(2, dim=-1)[0])

    def sample(self, states):
        means, log_stds = self.net(states).chunk(2, dim=-1)
        return reparameterize(means, log_stds.clamp_(-20, 2))  # <-- IPL001: in-place clamp of a view returned by chunk()


class TwinnedStateActionFunction(nn.Module):
    def __init__(self, state_shape, action_shape, hidden_units=(256, 256),
                 hidden_activation=nn.ReLU(inplace=True)):
        super().__init__()
        self.net1 = build_mlp(input_dim=state_shape[0] + action_shape[0], output_dim=1,
                              hidden_units=hidden_units, hidden_activation=hidden_activation)
        self.net2 = build_mlp(input_dim=state_shape[0] + action_shape[0], output_dim=1,
                              hidden_units=hidden_units, hidden_activation=hidden_activation)

    def forward(self, states, actions):
        xs = torch.cat([states, actions], dim=-1)
        return self.net1(xs), self.net2(xs)


class SAC:
    def __init__(self, state_shape, action_shape, gamma=0.99, lr_actor=3e-4, lr_critic=3e-4,
                 lr_alpha=3e-4, units_actor=(16, 16), units_critic=(16, 16), tau=5e-3):
        self.actor = StateDependentPolicy(state_shape, action_shape, hidden_units=units_actor,
                                          hidden_activation=nn.ReLU(inplace=True))
        self.critic = TwinnedStateActionFunction(state_shape, action_shape, hidden_units=units_critic,
                                                 hidden_activation=nn.ReLU(inplace=True))
        self.critic_target = TwinnedStateActionFunction(state_shape, action_shape, hidden_units=units_critic,
                                                        hidden_activation=nn.ReLU(inplace=True)).eval()
        soft_update(self.critic_target, self.critic, 1.0)
        disable_gradient(self.critic_target)

        self.alpha = 1.0
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.target_entropy = -float(action_shape[0])
        self.optim_actor = Adam(self.actor.parameters(), lr=lr_actor)
        self.optim_critic = Adam(self.critic.parameters(), lr=lr_critic)
        self.optim_alpha = torch.optim.Adam([self.log_alpha], lr=lr_alpha)
        self.gamma = gamma
        self.tau = tau
        self.learning_steps = 0

    def update(self, states, actions, rewards, dones, next_states):
        self.learning_steps += 1
        self.update_critic(states, actions, rewards, dones, next_states)
        self.update_actor(states)
        self.update_target()

    def update_critic(self, states, actions, rewards, dones, next_states):
        curr_qs1, curr_qs2 = self.critic(states, actions)
        with torch.no_grad():
            next_actions, log_pis = self.actor.sample(next_states)
            next_qs1, next_qs2 = self.critic_target(next_states, next_actions)
            next_qs = torch.min(next_qs1, next_qs2) - self.alpha * log_pis
        target_qs = rewards + (1.0 - dones) * self.gamma * next_qs

        loss_critic1 = (curr_qs1 - target_qs).pow_(2).mean()
        loss_critic2 = (curr_qs2 - target_qs).pow_(2).mean()

        self.optim_critic.zero_grad()
        (loss_critic1 + loss_critic2).backward(retain_graph=False)
        self.optim_critic.step()

    def update_actor(self, states):
        actions, log_pis = self.actor.sample(states)
        qs1, qs2 = self.critic(states, actions)
        loss_actor = self.alpha * log_pis.mean() - torch.min(qs1, qs2).mean()

        self.optim_actor.zero_grad()
        loss_actor.backward(retain_graph=False)
        self.optim_actor.step()

        entropy = -log_pis.detach_().mean()
        loss_alpha = -self.log_alpha * (self.target_entropy - entropy)

        self.optim_alpha.zero_grad()
        loss_alpha.backward(retain_graph=False)
        self.optim_alpha.step()

        with torch.no_grad():
            self.alpha = self.log_alpha.exp().item()
        self.loss_actor = loss_actor.detach()

    def update_target(self):
        soft_update(self.critic_target, self.critic, self.tau)


algo = SAC(state_shape=(3,), action_shape=(2,))
states = torch.randn(8, 3)
actions = torch.rand(8, 2) * 2 - 1
rewards = torch.randn(8, 1)
dones = torch.zeros(8, 1)
next_states = torch.randn(8, 3)
algo.update(states, actions, rewards, dones, next_states)
log_alpha = algo.log_alpha.detach().clone()
loss_actor = algo.loss_actor

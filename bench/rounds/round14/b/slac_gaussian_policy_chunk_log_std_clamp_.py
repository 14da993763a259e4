# label: hazard raises
# why: log_std is one of the views returned by torch.chunk, and clamp_ on an output of a multi-view function is forbidden by autograd
# source: https://github.com/toshikwa/slac.pytorch/commit/8b9d520a0020dbeba4ea1fc7e3c013be8b3a5d7d (issue https://github.com/toshikwa/slac.pytorch/issues/13)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def build_mlp(input_dim, output_dim, hidden_units=(16, 16)):
    layers = []
    units = input_dim
    for next_units in hidden_units:
        layers.append(nn.Linear(units, next_units))
        layers.append(nn.LeakyReLU(0.2))
        units = next_units
    layers.append(nn.Linear(units, output_dim))
    return nn.Sequential(*layers)


def calculate_gaussian_log_prob(log_std, noise):
    return (-0.5 * noise.pow(2) - log_std).sum(dim=-1, keepdim=True) - 0.5 * math.log(2 * math.pi) * log_std.size(-1)


def calculate_log_pi(log_std, noise, action):
    gaussian_log_prob = calculate_gaussian_log_prob(log_std, noise)
    return gaussian_log_prob - torch.log(1 - action.pow(2) + 1e-6).sum(dim=-1, keepdim=True)


def reparameterize(mean, log_std):
    noise = torch.randn_like(mean)
    action = torch.tanh(mean + noise * log_std.exp())
    return action, calculate_log_pi(log_std, noise, action)


class GaussianPolicy(nn.Module):
    def __init__(self, action_shape, num_sequences, feature_dim, hidden_units=(16, 16)):
        super().__init__()
        self.net = build_mlp(num_sequences * feature_dim + (num_sequences - 1) * action_shape[0], 2 * action_shape[0], hidden_units)

    def forward(self, feature_action):
        means = torch.chunk(self.net(feature_action), 2, dim=-1)[0]
        return torch.tanh(means)

    def sample(self, feature_action):
        mean, log_std = torch.chunk(self.net(feature_action), 2, dim=-1)
        action, log_pi = reparameterize(mean, log_std.clamp_(-20, 2))  # <-- IPL001: in-place clamp on a view returned by chunk
        return action, log_pi


class TwinnedQNetwork(nn.Module):
    def __init__(self, action_shape, z_dim, hidden_units=(16, 16)):
        super().__init__()
        self.net1 = build_mlp(action_shape[0] + z_dim, 1, hidden_units)
        self.net2 = build_mlp(action_shape[0] + z_dim, 1, hidden_units)

    def forward(self, z, action):
        x = torch.cat([z, action], dim=1)
        return self.net1(x), self.net2(x)


action_shape, num_sequences, feature_dim, z_dim = (2,), 3, 4, 6
actor = GaussianPolicy(action_shape, num_sequences, feature_dim)
critic = TwinnedQNetwork(action_shape, z_dim)
optim_actor = torch.optim.Adam(actor.parameters(), lr=3e-4)
log_alpha = torch.zeros(1, requires_grad=True)

feature_action = torch.randn(5, num_sequences * feature_dim + (num_sequences - 1) * action_shape[0])
z = torch.randn(5, z_dim)
action, log_pi = actor.sample(feature_action)
q1, q2 = critic(z, action)
loss_actor = -torch.mean(torch.min(q1, q2) - log_alpha.exp().detach() * log_pi)
optim_actor.zero_grad()
loss_actor.backward()
optim_actor.step()

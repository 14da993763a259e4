# label: safe no-twin
# why: the policy loss is computed only after the Q step, Q params are frozen via requires_grad during the policy step, and the Polyak target update mul_/add_ runs under torch.no_grad() on target params outside any graph.
# source: https://github.com/openai/spinningup/blob/20921137141b154454c0a2698709d9f9a0302101/spinup/algos/pytorch/sac/sac.py
import copy
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions.normal import Normal

torch.manual_seed(0)


def mlp(sizes, activation=nn.ReLU, output_activation=nn.Identity):
    layers = []
    for j in range(len(sizes) - 1):
        act = activation if j < len(sizes) - 2 else output_activation
        layers += [nn.Linear(sizes[j], sizes[j + 1]), act()]
    return nn.Sequential(*layers)


class SquashedGaussianMLPActor(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden_sizes, act_limit):
        super().__init__()
        self.net = mlp([obs_dim] + list(hidden_sizes), nn.ReLU, nn.ReLU)
        self.mu_layer = nn.Linear(hidden_sizes[-1], act_dim)
        self.log_std_layer = nn.Linear(hidden_sizes[-1], act_dim)
        self.act_limit = act_limit

    def forward(self, obs):
        net_out = self.net(obs)
        mu = self.mu_layer(net_out)
        std = torch.exp(torch.clamp(self.log_std_layer(net_out), -20, 2))
        pi_distribution = Normal(mu, std)
        pi_action = pi_distribution.rsample()
        logp_pi = pi_distribution.log_prob(pi_action).sum(axis=-1)
        logp_pi -= (2 * (torch.log(torch.tensor(2.0)) - pi_action - F.softplus(-2 * pi_action))).sum(axis=1)
        pi_action = torch.tanh(pi_action)
        return self.act_limit * pi_action, logp_pi


class MLPQFunction(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden_sizes):
        super().__init__()
        self.q = mlp([obs_dim + act_dim] + list(hidden_sizes) + [1])

    def forward(self, obs, act):
        return torch.squeeze(self.q(torch.cat([obs, act], dim=-1)), -1)


class MLPActorCritic(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden_sizes=(16, 16)):
        super().__init__()
        self.pi = SquashedGaussianMLPActor(obs_dim, act_dim, hidden_sizes, 1.0)
        self.q1 = MLPQFunction(obs_dim, act_dim, hidden_sizes)
        self.q2 = MLPQFunction(obs_dim, act_dim, hidden_sizes)


obs_dim, act_dim, gamma, alpha, polyak = 5, 2, 0.99, 0.2, 0.995
ac = MLPActorCritic(obs_dim, act_dim)
ac_targ = copy.deepcopy(ac)
for p in ac_targ.parameters():
    p.requires_grad = False
q_params = itertools.chain(ac.q1.parameters(), ac.q2.parameters())
pi_optimizer = torch.optim.Adam(ac.pi.parameters(), lr=1e-3)
q_optimizer = torch.optim.Adam(q_params, lr=1e-3)


def compute_loss_q(data):
    o, a, r, o2, d = data["obs"], data["act"], data["rew"], data["obs2"], data["done"]
    q1 = ac.q1(o, a)
    q2 = ac.q2(o, a)
    with torch.no_grad():
        a2, logp_a2 = ac.pi(o2)
        q_pi_targ = torch.min(ac_targ.q1(o2, a2), ac_targ.q2(o2, a2))
        backup = r + gamma * (1 - d) * (q_pi_targ - alpha * logp_a2)
    return ((q1 - backup) ** 2).mean() + ((q2 - backup) ** 2).mean()


def compute_loss_pi(data):
    o = data["obs"]
    pi, logp_pi = ac.pi(o)
    q_pi = torch.min(ac.q1(o, pi), ac.q2(o, pi))
    return (alpha * logp_pi - q_pi).mean()


def update(data):
    q_optimizer.zero_grad()
    loss_q = compute_loss_q(data)
    loss_q.backward()
    q_optimizer.step()
    for p in itertools.chain(ac.q1.parameters(), ac.q2.parameters()):
        p.requires_grad = False
    pi_optimizer.zero_grad()
    loss_pi = compute_loss_pi(data)
    loss_pi.backward()
    pi_optimizer.step()
    for p in itertools.chain(ac.q1.parameters(), ac.q2.parameters()):
        p.requires_grad = True
    with torch.no_grad():
        for p, p_targ in zip(ac.parameters(), ac_targ.parameters()):
            p_targ.data.mul_(polyak)
            p_targ.data.add_((1 - polyak) * p.data)
    return loss_q.detach(), loss_pi.detach()


data = {"obs": torch.randn(8, obs_dim), "act": torch.rand(8, act_dim) * 2 - 1, "rew": torch.randn(8),
        "obs2": torch.randn(8, obs_dim), "done": torch.zeros(8)}
loss_q, loss_pi = update(data)

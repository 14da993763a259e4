# label: safe
# why: the DiCE weights are built in place on a constant tensor, and the in-place cumulative sum over log_probs only multiplies by those constant weights, so no saved tensor is ever overwritten.
# source: https://github.com/Kostis-S-Z/exploring_meta/commit/673990b820811f930bc1254baf9b1cf6e70a2db2
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)


def magic_box(x):
    return torch.exp(x - x.detach())


def weighted_cumsum(values, weights):
    for i in range(values.size(0)):
        values[i] += values[i - 1] * weights[i]
    return values


class DiagNormalPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.mean = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh(), nn.Linear(16, act_dim))
        self.sigma = nn.Parameter(torch.zeros(act_dim))

    def log_prob(self, states, actions):
        density = Normal(self.mean(states), self.sigma.exp())
        return density.log_prob(actions).sum(-1, keepdim=True)


def compute_advantages(gamma, rewards, dones, values):
    advantages = torch.zeros_like(rewards)
    running = torch.zeros(1)
    for t in reversed(range(rewards.size(0))):
        running = rewards[t] + gamma * running * (1.0 - dones[t])
        advantages[t] = running - values[t]
    return advantages


def vpg_a2c_loss(episodes, learner, baseline, gamma, dice=False):
    states, actions, rewards, dones = episodes
    log_probs = learner.log_prob(states, actions)
    advantages = compute_advantages(gamma, rewards, dones, baseline(states).detach())
    if dice:
        weights = torch.ones_like(dones)
        weights[1:].add_(dones[:-1], alpha=-1.0)
        weights /= dones.sum()
        cum_log_probs = weighted_cumsum(log_probs, weights)
        log_probs = magic_box(cum_log_probs)
    return -(log_probs * advantages).mean()


obs_dim, act_dim, T = 3, 2, 6
learner = DiagNormalPolicy(obs_dim, act_dim)
baseline = nn.Linear(obs_dim, 1)
dones = torch.zeros(T, 1)
dones[2] = 1.0
dones[-1] = 1.0
episodes = (torch.randn(T, obs_dim), torch.randn(T, act_dim), torch.randn(T, 1), dones)
inner_loss = vpg_a2c_loss(episodes, learner, baseline, gamma=0.99, dice=True)
grads = torch.autograd.grad(inner_loss, list(learner.parameters()), create_graph=True)
meta_loss = sum(g.pow(2).sum() for g in grads)
meta_loss.backward()

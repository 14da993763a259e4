# label: safe
# why: log_prob -= log(scale * (1 - y^2)) edits the result of Normal.log_prob, whose last op (a subtraction of a constant) saved nothing, so the actor and alpha losses backpropagate the same.
# source: https://github.com/vwxyzjn/cleanrl/blob/2f4172eef96118b4d9d7111e1ecab1859a4b257c/cleanrl/sac_continuous_action.py
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)

LOG_STD_MAX = 2
LOG_STD_MIN = -5


class SoftQNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim + act_dim, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 1)

    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, high, low):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc_mean = nn.Linear(16, act_dim)
        self.fc_logstd = nn.Linear(16, act_dim)
        # action rescaling
        self.register_buffer("action_scale", torch.tensor((high - low) / 2.0, dtype=torch.float32))
        self.register_buffer("action_bias", torch.tensor((high + low) / 2.0, dtype=torch.float32))

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        mean = self.fc_mean(x)
        log_std = self.fc_logstd(x)
        log_std = torch.tanh(log_std)
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)  # From SpinUp / Denis Yarats
        return mean, log_std

    def get_action(self, x):
        mean, log_std = self(x)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        x_t = normal.rsample()  # for reparameterization trick (mean + std * N(0,1))
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        # Enforcing Action Bound
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        log_prob = log_prob.sum(1, keepdim=True)
        mean = torch.tanh(mean) * self.action_scale + self.action_bias
        return action, log_prob, mean


obs_dim, act_dim = 4, 2
high, low = np.array([2.0, 1.0]), np.array([-2.0, -1.0])
actor = Actor(obs_dim, act_dim, high, low)
qf1 = SoftQNetwork(obs_dim, act_dim)
qf2 = SoftQNetwork(obs_dim, act_dim)
actor_optimizer = optim.Adam(list(actor.parameters()), lr=3e-4)
target_entropy = -float(act_dim)
log_alpha = torch.zeros(1, requires_grad=True)
alpha = log_alpha.exp().item()
a_optimizer = optim.Adam([log_alpha], lr=1e-3)

observations = torch.randn(8, obs_dim)
pi, log_pi, _ = actor.get_action(observations)
qf1_pi = qf1(observations, pi)
qf2_pi = qf2(observations, pi)
min_qf_pi = torch.min(qf1_pi, qf2_pi)
actor_loss = ((alpha * log_pi) - min_qf_pi).mean()

actor_optimizer.zero_grad()
actor_loss.backward()
actor_optimizer.step()

with torch.no_grad():
    _, log_pi, _ = actor.get_action(observations)
alpha_loss = (-log_alpha.exp() * (log_pi + target_entropy)).mean()

a_optimizer.zero_grad()
alpha_loss.backward()
a_optimizer.step()
alpha = log_alpha.exp().item()

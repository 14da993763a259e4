# label: safe
# why: the entropy term is subtracted in place from target_q inside torch.no_grad(), on a fresh reduction output that nothing saved, so the critic targets and gradients match the out-of-place version
# source: https://github.com/thu-ml/tianshou/blob/ad747761a2f743bc2cb95dc5644d7ff74b41e796/tianshou/policy/modelfree/redq.py
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)


class EnsembleCritic(nn.Module):
    def __init__(self, obs_dim, act_dim, ensemble_size=5):
        super().__init__()
        self.nets = nn.ModuleList([nn.Sequential(nn.Linear(obs_dim + act_dim, 16), nn.ReLU(), nn.Linear(16, 1))
                                   for _ in range(ensemble_size)])

    def forward(self, obs, act):
        x = torch.cat([obs, act], dim=-1)
        return torch.stack([net(x) for net in self.nets], dim=0)


class REDQPolicy:
    def __init__(self, obs_dim=3, act_dim=2, ensemble_size=5, subset_size=2, alpha=0.2, gamma=0.99):
        self.actor = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, 2 * act_dim))
        self.critic = EnsembleCritic(obs_dim, act_dim, ensemble_size)
        self.critic_old = EnsembleCritic(obs_dim, act_dim, ensemble_size)
        self.critic_old.load_state_dict(self.critic.state_dict())
        self.critic_optim = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.ensemble_size, self.subset_size = ensemble_size, subset_size
        self.alpha, self.gamma = alpha, gamma
        self.target_mode = "min"

    def __call__(self, obs):
        mu, log_std = self.actor(obs).chunk(2, -1)
        dist = torch.distributions.Normal(mu, log_std.clamp(-5, 2).exp())
        x = dist.rsample()
        act = torch.tanh(x)
        log_prob = (dist.log_prob(x) - torch.log(1 - act.pow(2) + 1e-6)).sum(-1, keepdim=True)
        return act, log_prob

    def _target_q(self, obs_next):
        a_, log_prob = self(obs_next)
        sample_ensemble_idx = np.random.choice(self.ensemble_size, self.subset_size, replace=False)
        qs = self.critic_old(obs_next, a_)[sample_ensemble_idx, ...]
        if self.target_mode == "min":
            target_q, _ = torch.min(qs, dim=0)
        elif self.target_mode == "mean":
            target_q = torch.mean(qs, dim=0)
        target_q -= self.alpha * log_prob
        return target_q

    def learn(self, obs, act, rew, obs_next, done):
        with torch.no_grad():
            target_q = rew + self.gamma * (1 - done) * self._target_q(obs_next)
        current_qs = self.critic(obs, act)
        critic_loss = F.mse_loss(current_qs, target_q.unsqueeze(0).expand_as(current_qs))
        self.critic_optim.zero_grad()
        critic_loss.backward()
        return critic_loss.detach(), target_q


policy = REDQPolicy()
obs, act = torch.randn(6, 3), torch.rand(6, 2) * 2 - 1
rew, obs_next, done = torch.randn(6, 1), torch.randn(6, 3), torch.zeros(6, 1)
critic_loss, target_q = policy.learn(obs, act, rew, obs_next, done)

# label: hazard raises no-twin
# why: one critic forward on cat([batch.act, a]) feeds both the critic loss and the actor loss; the critic optimizers step in place (retain_graph=True) before actor_loss.backward() needs the old critic weights
# source: https://github.com/thu-ml/tianshou/issues/37 (tianshou/policy/modelfree/sac.py at commit 3cc22b7c)
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)


class Critic(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_dim + action_dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, s, a):
        s = torch.tensor(s, dtype=torch.float)
        return self.net(torch.cat([s, a], dim=1))


class ActorProb(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(state_dim, 16), nn.ReLU(), nn.Linear(16, action_dim))
        self.sigma = nn.Parameter(torch.zeros(action_dim))

    def forward(self, s):
        s = torch.tensor(s, dtype=torch.float)
        return self.mu(s), self.sigma.exp().expand(s.shape[0], -1)


class SACPolicy(nn.Module):
    def __init__(self, actor, critic1, critic2, alpha=0.2, gamma=0.99, tau=0.005):
        super().__init__()
        self.actor, self.critic1, self.critic2 = actor, critic1, critic2
        self.critic1_old = Critic(3, 2)
        self.critic1_old.load_state_dict(critic1.state_dict())
        self.critic2_old = Critic(3, 2)
        self.critic2_old.load_state_dict(critic2.state_dict())
        self.actor_optim = torch.optim.Adam(actor.parameters(), lr=1e-3)
        self.critic1_optim = torch.optim.Adam(critic1.parameters(), lr=1e-3)
        self.critic2_optim = torch.optim.Adam(critic2.parameters(), lr=1e-3)
        self._alpha, self._gamma, self._tau = alpha, gamma, tau

    def sync_weight(self):
        for o, n in zip(self.critic1_old.parameters(), self.critic1.parameters()):
            o.data.copy_(o.data * (1 - self._tau) + n.data * self._tau)
        for o, n in zip(self.critic2_old.parameters(), self.critic2.parameters()):
            o.data.copy_(o.data * (1 - self._tau) + n.data * self._tau)

    def forward(self, batch, input='obs'):
        obs = getattr(batch, input)
        mu, sigma = self.actor(obs)
        dist = torch.distributions.Normal(mu, sigma)
        x = dist.rsample()
        y = torch.tanh(x)
        log_prob = (dist.log_prob(x) - torch.log(1 - y.pow(2) + 1e-6)).sum(-1, keepdim=True)
        return SimpleNamespace(act=y, log_prob=log_prob)

    def learn(self, batch, **kwargs):
        with torch.no_grad():
            obs_next_result = self(batch, input='obs_next')
            a_ = obs_next_result.act
            batch.act = torch.tensor(batch.act, dtype=torch.float)
            target_q = torch.min(
                self.critic1_old(batch.obs_next, a_),
                self.critic2_old(batch.obs_next, a_),
            ) - self._alpha * obs_next_result.log_prob
            rew = torch.tensor(batch.rew, dtype=torch.float)[:, None]
            done = torch.tensor(batch.done, dtype=torch.float)[:, None]
            target_q = (rew + (1. - done) * self._gamma * target_q)
        obs_result = self(batch)
        a = obs_result.act
        current_q1, current_q1a = self.critic1(
            np.concatenate([batch.obs, batch.obs]), torch.cat([batch.act, a])
        ).split(batch.obs.shape[0])
        current_q2, current_q2a = self.critic2(
            np.concatenate([batch.obs, batch.obs]), torch.cat([batch.act, a])
        ).split(batch.obs.shape[0])
        actor_loss = (self._alpha * obs_result.log_prob - torch.min(current_q1a, current_q2a)).mean()
        # critic 1
        critic1_loss = F.mse_loss(current_q1, target_q)
        self.critic1_optim.zero_grad()
        critic1_loss.backward(retain_graph=True)
        self.critic1_optim.step()  # <-- IPL001: critic1 weights change in place while actor_loss still needs them
        # critic 2
        critic2_loss = F.mse_loss(current_q2, target_q)
        self.critic2_optim.zero_grad()
        critic2_loss.backward(retain_graph=True)
        self.critic2_optim.step()  # <-- IPL001: same for critic2
        # actor
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        self.sync_weight()
        return {'loss/actor': actor_loss.item(), 'loss/critic1': critic1_loss.item(), 'loss/critic2': critic2_loss.item()}


policy = SACPolicy(ActorProb(3, 2), Critic(3, 2), Critic(3, 2))
batch = SimpleNamespace(
    obs=np.random.randn(8, 3).astype(np.float32),
    act=np.random.uniform(-1, 1, (8, 2)).astype(np.float32),
    rew=np.random.randn(8).astype(np.float32),
    done=np.zeros(8, dtype=np.float32),
    obs_next=np.random.randn(8, 3).astype(np.float32),
)
losses = policy.learn(batch)

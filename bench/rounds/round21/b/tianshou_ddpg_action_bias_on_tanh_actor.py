# label: safe
# why: with tianshou's stock Actor the output is `self._max * torch.tanh(logits)`, a multiply by a Python scalar that saves nothing, so DDPGPolicy.forward's in-place `logits += self._action_bias` (and the in-place ReLUs, whose outputs only feed Linear layers) leave every saved tensor intact.
# source: https://github.com/thu-ml/tianshou/blob/befdfb07e871c7240bb4ccc593ac0c555e514409/test/continuous/net.py (see https://github.com/thu-ml/tianshou/issues/29)
import types

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class Batch(types.SimpleNamespace):
    pass


class Actor(nn.Module):
    def __init__(self, layer_num, state_shape, action_shape, max_action, device='cpu'):
        super().__init__()
        self.device = device
        self.model = [nn.Linear(state_shape, 64), nn.ReLU(inplace=True)]
        for i in range(layer_num):
            self.model += [nn.Linear(64, 64), nn.ReLU(inplace=True)]
        self.model += [nn.Linear(64, action_shape)]
        self.model = nn.Sequential(*self.model)
        self._max = max_action

    def forward(self, s, **kwargs):
        batch = s.shape[0]
        s = s.view(batch, -1)
        logits = self.model(s)
        logits = self._max * torch.tanh(logits)
        return logits, None


class Critic(nn.Module):
    def __init__(self, layer_num, state_shape, action_shape=0, device='cpu'):
        super().__init__()
        self.model = [nn.Linear(state_shape + action_shape, 64), nn.ReLU(inplace=True)]
        for i in range(layer_num):
            self.model += [nn.Linear(64, 64), nn.ReLU(inplace=True)]
        self.model += [nn.Linear(64, 1)]
        self.model = nn.Sequential(*self.model)

    def forward(self, s, a=None):
        s = s.view(s.shape[0], -1)
        if a is not None:
            s = torch.cat([s, a.view(a.shape[0], -1)], dim=1)
        return self.model(s)


class DDPGPolicy(nn.Module):
    def __init__(self, actor, actor_optim, critic, critic_optim, gamma=0.99, exploration_noise=0.1,
                 action_range=(-1.0, 1.0)):
        super().__init__()
        self.actor, self.actor_optim = actor, actor_optim
        self.critic, self.critic_optim = critic, critic_optim
        self._gamma = gamma
        self._eps = exploration_noise
        self._range = action_range
        self._action_bias = (action_range[0] + action_range[1]) / 2
        self._action_scale = (action_range[1] - action_range[0]) / 2

    def forward(self, batch, state=None, model='actor', input='obs', eps=None, **kwargs):
        model = getattr(self, model)
        obs = getattr(batch, input)
        logits, h = model(obs, state=state)
        logits += self._action_bias
        if eps is None:
            eps = self._eps
        if eps > 0:
            logits += torch.randn(size=logits.shape) * eps
        logits = logits.clamp(self._range[0], self._range[1])
        return Batch(act=logits, state=h)

    def learn(self, batch):
        with torch.no_grad():
            target_q = self.critic(batch.obs_next, self(batch, input='obs_next', eps=0).act)
            target_q = batch.rew[:, None] + (1. - batch.done[:, None]) * self._gamma * target_q
        current_q = self.critic(batch.obs, batch.act)
        critic_loss = F.mse_loss(current_q, target_q)
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()
        actor_loss = -self.critic(batch.obs, self(batch, eps=0).act).mean()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        return critic_loss.detach(), actor_loss.detach()


def main():
    actor = Actor(1, 3, 2, max_action=1.0)
    critic = Critic(1, 3, 2)
    policy = DDPGPolicy(actor, torch.optim.Adam(actor.parameters(), lr=1e-4),
                        critic, torch.optim.Adam(critic.parameters(), lr=1e-3))
    n = 16
    batch = Batch(obs=torch.randn(n, 3), act=torch.rand(n, 2) * 2 - 1, rew=torch.randn(n),
                  done=(torch.rand(n) < 0.1).float(), obs_next=torch.randn(n, 3))
    critic_loss, actor_loss = policy.learn(batch)
    return critic_loss, actor_loss, actor.model[0].weight.clone()


critic_loss, actor_loss, actor_first_weight = main()

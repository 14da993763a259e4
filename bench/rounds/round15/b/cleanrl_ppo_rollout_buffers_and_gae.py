# label: safe
# why: rollout tensors are filled slot by slot (values and GAE advantages inside torch.no_grad()), before any forward pass whose graph is backpropagated reads them, so no saved tensor is ever overwritten.
# source: https://github.com/vwxyzjn/cleanrl/blob/2f4172eef96118b4d9d7111e1ecab1859a4b257c/cleanrl/ppo.py
import numpy as np
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical

torch.manual_seed(0)


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 16)), nn.Tanh(),
            layer_init(nn.Linear(16, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 16)), nn.Tanh(),
            layer_init(nn.Linear(16, n_actions), std=0.01),
        )

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        logits = self.actor(x)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


num_steps, num_envs, obs_dim, n_actions = 8, 2, 4, 2
gamma, gae_lambda, clip_coef, ent_coef, vf_coef = 0.99, 0.95, 0.2, 0.01, 0.5
agent = Agent(obs_dim, n_actions)
optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)

obs = torch.zeros((num_steps, num_envs, obs_dim))
actions = torch.zeros((num_steps, num_envs))
logprobs = torch.zeros((num_steps, num_envs))
rewards = torch.zeros((num_steps, num_envs))
dones = torch.zeros((num_steps, num_envs))
values = torch.zeros((num_steps, num_envs))

next_obs = torch.randn(num_envs, obs_dim)
next_done = torch.zeros(num_envs)
for step in range(0, num_steps):
    obs[step] = next_obs
    dones[step] = next_done
    with torch.no_grad():
        action, logprob, _, value = agent.get_action_and_value(next_obs)
        values[step] = value.flatten()
    actions[step] = action
    logprobs[step] = logprob
    rewards[step] = torch.randn(num_envs).view(-1)
    next_obs = torch.randn(num_envs, obs_dim)
    next_done = (torch.rand(num_envs) < 0.2).float()

# bootstrap value if not done
with torch.no_grad():
    next_value = agent.get_value(next_obs).reshape(1, -1)
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(num_steps)):
        if t == num_steps - 1:
            nextnonterminal = 1.0 - next_done
            nextvalues = next_value
        else:
            nextnonterminal = 1.0 - dones[t + 1]
            nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
    returns = advantages + values

b_obs = obs.reshape((-1, obs_dim))
b_logprobs = logprobs.reshape(-1)
b_actions = actions.reshape(-1)
b_advantages = advantages.reshape(-1)
b_returns = returns.reshape(-1)

mb_inds = torch.arange(8)
_, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_actions.long()[mb_inds])
logratio = newlogprob - b_logprobs[mb_inds]
ratio = logratio.exp()
mb_advantages = b_advantages[mb_inds]
mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
pg_loss1 = -mb_advantages * ratio
pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
pg_loss = torch.max(pg_loss1, pg_loss2).mean()
v_loss = 0.5 * ((newvalue.view(-1) - b_returns[mb_inds]) ** 2).mean()
loss = pg_loss - ent_coef * entropy.mean() + v_loss * vf_coef
optimizer.zero_grad()
loss.backward()
nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
optimizer.step()

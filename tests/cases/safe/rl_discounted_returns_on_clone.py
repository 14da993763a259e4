# label: safe
# why: the discounted returns are accumulated in place on rewards.clone(), so the raw rewards used for logging keep their values
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(list(policy.parameters()) + list(critic.parameters()), lr=3e-4)
gamma = 0.95

T = 8
obs = torch.randn(T, 4)
actions = torch.randint(0, 2, (T,))
rewards = torch.rand(T)
dones = torch.zeros(T)
dones[4] = 1.0

returns = rewards.clone()
for t in reversed(range(T - 1)):
    returns[t] += gamma * returns[t + 1] * (1 - dones[t])

values = critic(obs).squeeze(-1)
advantages = returns - values.detach()
advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
logp = F.log_softmax(policy(obs), dim=-1).gather(1, actions[:, None]).squeeze(1)
loss = -(logp * advantages).mean() + 0.5 * F.mse_loss(values, returns)

opt.zero_grad()
loss.backward()
opt.step()

episode_reward = rewards.sum()
policy_w = policy[0].weight.detach().clone()

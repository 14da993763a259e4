# label: hazard silent
# why: returns.sub_ turns the returns buffer into advantages; the value loss later reads `returns` expecting the discounted returns
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
params = list(policy.parameters()) + list(critic.parameters())
opt = torch.optim.Adam(params, lr=3e-4)

T = 10
gamma = 0.99
obs = torch.randn(T, 4)
actions = torch.randint(0, 2, (T,))
rewards = torch.rand(T)

returns = torch.zeros(T)
running = torch.tensor(0.0)
for t in reversed(range(T)):
    running = rewards[t] + gamma * running
    returns[t] = running

values = critic(obs).squeeze(-1)
advantages = returns.sub_(values.detach())  # <-- IPL002
advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

logp = F.log_softmax(policy(obs), dim=-1).gather(1, actions[:, None]).squeeze(1)
policy_loss = -(logp * advantages).mean()
value_loss = F.mse_loss(values, returns)
loss = policy_loss + 0.5 * value_loss

opt.zero_grad()
loss.backward()
opt.step()

value_w = critic[0].weight.detach().clone()
policy_w = policy[0].weight.detach().clone()

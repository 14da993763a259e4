# label: hazard silent
# why: GAE is accumulated in place into an alias of the TD-error tensor, so the TD-error statistic logged afterwards reads advantages instead of deltas.
import torch
import torch.nn as nn

torch.manual_seed(0)
T = 6
gamma, lam = 0.99, 0.95
critic = nn.Linear(3, 1)
obs = torch.randn(T + 1, 3)
rewards = torch.randn(T)
dones = torch.tensor([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])

with torch.no_grad():
    values = critic(obs).squeeze(-1)
deltas = rewards + gamma * values[1:] * (1 - dones) - values[:-1]
advantages = deltas
for t in reversed(range(T - 1)):
    advantages[t] += gamma * lam * (1 - dones[t]) * advantages[t + 1]  # <-- IPL002: deltas is read again below
returns = advantages + values[:-1]
td_error_mse = deltas.pow(2).mean()
value_loss = (critic(obs[:-1]).squeeze(-1) - returns).pow(2).mean()
value_loss.backward()

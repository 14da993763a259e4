# label: safe
# why: GAE writes advantages into a fresh torch.zeros buffer, so the TD errors and rewards read later keep their values.
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
advantages = torch.zeros(T)
last = torch.zeros(())
for t in reversed(range(T)):
    last = deltas[t] + gamma * lam * (1 - dones[t]) * last
    advantages[t] = last
returns = advantages + values[:-1]
advantages -= advantages.mean()
advantages /= advantages.std() + 1e-8
td_error_mse = deltas.pow(2).mean()
value_loss = (critic(obs[:-1]).squeeze(-1) - returns).pow(2).mean()
value_loss.backward()

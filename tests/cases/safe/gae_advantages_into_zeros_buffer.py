# label: safe
# why: GAE is written element by element into a fresh torch.zeros buffer computed from detached values, and returns are built with a new tensor before anything else reads it.
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

advantages = torch.zeros(T)
lastgaelam = 0.0
for t in reversed(range(T)):
    nonterminal = 1.0 - dones[t]
    delta = rewards[t] + gamma * values[t + 1] * nonterminal - values[t]
    lastgaelam = delta + gamma * lam * nonterminal * lastgaelam
    advantages[t] = lastgaelam
returns = advantages + values[:T]

v = critic(obs[:T]).squeeze(-1)
loss = 0.5 * (v - returns).pow(2).mean()
loss.backward()

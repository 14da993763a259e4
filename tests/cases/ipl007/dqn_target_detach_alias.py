# label: hazard silent
# why: target = q.detach() shares storage with q; writing the TD targets into it also overwrites q, so the loss is exactly zero
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

qnet = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
states = torch.randn(5, 4)
next_states = torch.randn(5, 4)
actions = torch.tensor([0, 2, 1, 1, 0])
rewards = torch.randn(5)
gamma = 0.9

q = qnet(states)
with torch.no_grad():
    next_q = qnet(next_states).max(dim=1).values
target = q.detach()
target[torch.arange(5), actions] = rewards + gamma * next_q  # <-- IPL007
loss = F.mse_loss(q, target)
loss.backward()

# label: hazard silent
# why: the rollout list stores h itself, so the in-place episode reset `h.mul_(1 - done)` also zeroes the hidden state already recorded for the previous step.
import torch
import torch.nn as nn

torch.manual_seed(0)

cell = nn.GRUCell(4, 6)
value_head = nn.Linear(6, 1)

obs = torch.randn(6, 3, 4)
dones = torch.tensor([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0],
                      [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])

h = torch.zeros(3, 6)
rollout_h = []
for t in range(obs.shape[0]):
    h = cell(obs[t], h)
    rollout_h.append(h)
    h.mul_(1.0 - dones[t].unsqueeze(1))  # <-- IPL002: rollout_h[-1] is the same tensor

hiddens = torch.stack(rollout_h)
values = value_head(hiddens).squeeze(-1)
values.pow(2).mean().backward()

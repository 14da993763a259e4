# label: safe no-twin
# why: the EMA copy is updated with ema_p.data.mul_(d).add_(p.data, alpha=1-d) only after backward and optimizer.step, and the EMA model's own forward never enters a graph that is differentiated.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(4, 16), nn.GELU(), nn.Linear(16, 3))
ema = copy.deepcopy(model)
for p in ema.parameters():
    p.requires_grad_(False)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
decay = 0.9

for step in range(4):
    x = torch.randn(8, 4)
    y = torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    for ema_p, p in zip(ema.parameters(), model.parameters()):
        ema_p.data.mul_(decay).add_(p.data, alpha=1 - decay)

x_eval = torch.randn(5, 4)
ema_out = ema(x_eval)

# label: hazard silent
# why: the hidden state is appended to `outputs` and then scaled in place, so the stored per-step output is the scaled one
import torch
import torch.nn as nn

torch.manual_seed(0)

proj = nn.Linear(3, 3)
xs = torch.randn(4, 2, 3)

outputs = []
for t in range(xs.shape[0]):
    h = proj(xs[t])
    outputs.append(h)
    h.mul_(0.5)  # <-- IPL002
    outputs.append(h.sum(-1, keepdim=True))

stacked = torch.cat(outputs, dim=-1)
loss = stacked.pow(2).sum()
loss.backward()

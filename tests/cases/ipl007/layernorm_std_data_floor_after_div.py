# label: hazard silent
# why: the per-row std is floored through std.data.clamp_ after it was already used as the divisor, so div's backward silently reuses the floored std that the forward never divided by.
import torch
import torch.nn as nn

torch.manual_seed(0)

proj = nn.Linear(6, 6)
gain = nn.Parameter(torch.ones(6))
x = torch.randn(5, 6)
x[1] *= 0.05
x[3] *= 0.05

h = proj(x)
mu = h.mean(dim=-1, keepdim=True)
std = h.std(dim=-1, keepdim=True)
y = (h - mu) / std * gain
std.data.clamp_(min=0.5)  # <-- IPL007: div saved std for its backward
loss = y.pow(3).sum()
loss.backward()
proj_grad = proj.weight.grad.clone()
gain_grad = gain.grad.clone()

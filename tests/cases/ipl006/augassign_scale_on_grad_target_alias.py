# label: hazard silent
# why: target = h is an alias; `h *= scale` rewrites that same tensor, so the gradient w.r.t. target is taken after the scaling
import torch
import torch.nn as nn

torch.manual_seed(0)

embed = nn.Linear(3, 4)
block = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
x = torch.randn(6, 3)
scale = 4.0 ** 0.5

h = embed(x)
target = h
h *= scale  # <-- IPL006
y = block(h)
(g_target,) = torch.autograd.grad(y.sum(), target)

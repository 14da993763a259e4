# label: safe
# why: the probabilities are clamped with a positive minimum (min=1e-6) before the log, a numerical floor rather than a ReLU, so there is no relu-style kink at zero.
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
x = torch.randn(10, 4)
y = (torch.rand(10, 1) > 0.5).float()

p = model(x)
p_safe = p.clamp(min=1e-6, max=1 - 1e-6)
loss = -(y * torch.log(p_safe) + (1 - y) * torch.log(torch.clamp(1 - p, min=1e-6))).mean()
loss.backward()
w_grad = model[0].weight.grad.clone()

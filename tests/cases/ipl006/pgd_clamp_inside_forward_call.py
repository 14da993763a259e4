# label: hazard silent
# why: model(x_adv.clamp_(0, 1)) overwrites x_adv with its clamped value, so autograd.grad(loss, x_adv) skips the clamp and pushes pixels that are already saturated.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 3))
x = torch.rand(4, 3, 2, 2)
y = torch.tensor([0, 1, 2, 1])
eps, alpha, steps = 0.3, 0.1, 5

delta = torch.empty_like(x).uniform_(-eps, eps).requires_grad_(True)
for _ in range(steps):
    x_adv = x + delta
    loss = F.cross_entropy(model(x_adv.clamp_(0.0, 1.0)), y)  # <-- IPL006: x_adv is the grad target
    (g_x,) = torch.autograd.grad(loss, x_adv)
    with torch.no_grad():
        delta += alpha * g_x.sign()
        delta.clamp_(-eps, eps)

x_final = (x + delta).clamp(0.0, 1.0).detach()

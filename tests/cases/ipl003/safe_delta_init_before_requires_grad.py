# label: safe no-twin
# why: the PGD perturbation gets its random start with uniform_ before requires_grad_() is called, and every later step rebuilds it from a detached tensor, so no in-place write hits a leaf that requires grad.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Flatten(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
model.eval()
x = torch.rand(6, 1, 4, 4)
y = torch.randint(0, 4, (6,))
eps, alpha = 8 / 255, 2 / 255

delta = torch.zeros_like(x)
delta.uniform_(-eps, eps)
delta.requires_grad_()
for _ in range(3):
    loss = F.cross_entropy(model(x + delta), y)
    (g,) = torch.autograd.grad(loss, delta)
    delta = (delta.detach() + alpha * g.sign()).clamp_(-eps, eps)
    delta.requires_grad_()

x_adv = (x + delta).clamp(0, 1).detach()

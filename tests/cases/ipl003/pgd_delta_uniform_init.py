# label: hazard raises no-twin
# why: the PGD perturbation is created with requires_grad=True and only afterwards given its random start with delta.uniform_(-eps, eps), an in-place write to a grad-requiring leaf.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Flatten(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
model.eval()
x = torch.rand(6, 1, 4, 4)
y = torch.randint(0, 4, (6,))
eps, alpha, steps = 8 / 255, 2 / 255, 3

delta = torch.zeros_like(x, requires_grad=True)
delta.uniform_(-eps, eps)  # <-- IPL003: random start written into a leaf that requires grad
for _ in range(steps):
    loss = F.cross_entropy(model(x + delta), y)
    (g,) = torch.autograd.grad(loss, delta)
    delta = (delta + alpha * g.sign()).clamp(-eps, eps).detach().requires_grad_(True)

x_adv = (x + delta).clamp(0, 1).detach()

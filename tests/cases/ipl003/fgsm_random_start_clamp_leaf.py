# label: hazard raises
# why: x_adv is a leaf that requires grad, so clamping it in place before autograd.grad(loss, x_adv) raises instead of producing the attack gradient.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 3))
x = torch.rand(4, 3, 2, 2)
y = torch.tensor([0, 1, 2, 1])
eps = 0.1

x_adv = (x + torch.empty_like(x).uniform_(-eps, eps)).requires_grad_(True)
x_adv.clamp_(0.0, 1.0)  # <-- IPL003: x_adv is the grad target
loss = F.cross_entropy(model(x_adv), y)
(grad,) = torch.autograd.grad(loss, x_adv)
x_attacked = (x_adv + eps * grad.sign()).clamp(0.0, 1.0).detach()

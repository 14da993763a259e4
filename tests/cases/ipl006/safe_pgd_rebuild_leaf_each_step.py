# label: safe
# why: each step differentiates the fresh leaf x_adv and then rebuilds it from a detached, out-of-place clamp; the only clamp_ runs on a detached tensor before requires_grad_().
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 3))
x = torch.rand(4, 3, 2, 2)
y = torch.tensor([0, 1, 2, 1])
eps, alpha, steps = 0.3, 0.1, 5

x_adv = (x + torch.empty_like(x).uniform_(-eps, eps)).clamp_(0.0, 1.0).requires_grad_()
for _ in range(steps):
    loss = F.cross_entropy(model(x_adv), y)
    (grad,) = torch.autograd.grad(loss, x_adv)
    x_adv = x_adv.detach() + alpha * grad.sign()
    x_adv = torch.min(torch.max(x_adv, x - eps), x + eps)
    x_adv = x_adv.detach().clamp(0.0, 1.0).requires_grad_()

x_final = x_adv.detach()

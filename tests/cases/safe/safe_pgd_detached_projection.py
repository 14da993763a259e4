# label: safe
# why: each PGD iteration differentiates a new non-leaf input (x + delta), and the step, projection and in-place clamp are applied under no_grad to fresh tensors.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
for p in model.parameters():
    p.requires_grad = False
x = torch.rand(8, 10)
y = torch.randint(0, 4, (8,))
eps, alpha = 0.1, 0.03

x_adv = x.clone()
for _ in range(3):
    delta = torch.zeros_like(x, requires_grad=True)
    loss = F.cross_entropy(model(x_adv + delta), y)
    g, = torch.autograd.grad(loss, delta)
    with torch.no_grad():
        x_adv = x_adv + alpha * g.sign()
        x_adv = torch.max(torch.min(x_adv, x + eps), x - eps)
        x_adv.clamp_(0, 1)
adv_logits = model(x_adv)

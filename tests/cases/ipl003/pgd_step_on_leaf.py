# label: hazard raises
# why: the PGD attack steps its adversarial input in place, but that input is a leaf created with requires_grad=True.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
x = torch.rand(8, 10)
y = torch.randint(0, 4, (8,))
eps, alpha = 0.1, 0.03

x_adv = x.clone().requires_grad_(True)
for _ in range(3):
    loss = F.cross_entropy(model(x_adv), y)
    g, = torch.autograd.grad(loss, x_adv)
    x_adv += alpha * g.sign()  # <-- IPL003: x_adv is a leaf that requires grad
    x_adv = torch.max(torch.min(x_adv, x + eps), x - eps).clamp(0, 1)
adv_logits = model(x_adv)

# label: safe
# why: after the FGSM step the adversarial image is kept in the valid pixel range with clamp(0, 1) on detached data, a box projection with both bounds, not a ReLU inside a differentiated graph.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Flatten(), nn.Linear(16, 10), nn.ReLU(), nn.Linear(10, 3))
x = torch.rand(5, 1, 4, 4)
x[:, :, 0, :] = 0.0
y = torch.randint(0, 3, (5,))
eps = 0.1

x_req = x.clone().requires_grad_(True)
loss = F.cross_entropy(model(x_req), y)
(g,) = torch.autograd.grad(loss, x_req)
x_adv = (x + eps * g.sign()).clamp(0.0, 1.0).detach()
adv_logits = model(x_adv).detach()

# label: hazard raises no-twin
# why: x_adv is clamped in place after the model's linear layer saved it, and autograd.grad is then taken w.r.t. the overwritten x_adv
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
eps = 0.1

x = torch.rand(4, 6)
y = torch.randint(0, 3, (4,))

# random start for FGSM, then one signed-gradient step on the input
delta = torch.empty_like(x).uniform_(-eps, eps).requires_grad_(True)
x_adv = x + delta
logits = model(x_adv)
attack_loss = F.cross_entropy(logits, y)
x_adv.clamp_(0.0, 1.0)  # <-- IPL001,IPL006
grad_x, = torch.autograd.grad(attack_loss, x_adv)

x_adv = (x_adv.detach() + eps * grad_x.sign()).clamp(0.0, 1.0)
adv_loss = F.cross_entropy(model(x_adv), y)
opt.zero_grad()
adv_loss.backward()
opt.step()

w_after = model[0].weight.detach().clone()

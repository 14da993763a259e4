# label: hazard raises
# why: PGD loop updates the adversarial input (a requires_grad leaf) with += outside torch.no_grad()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Flatten(), nn.Linear(12, 3))
images = torch.rand(2, 3, 2, 2)
labels = torch.tensor([0, 2])
eps, alpha = 0.03, 0.01

x_adv = images.clone().requires_grad_(True)
for _ in range(2):
    loss = F.cross_entropy(model(x_adv), labels)
    (grad,) = torch.autograd.grad(loss, x_adv)
    x_adv += alpha * grad.sign()  # <-- IPL003

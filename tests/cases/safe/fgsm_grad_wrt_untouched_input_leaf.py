# label: safe
# why: the input gradient is taken w.r.t. a fresh leaf that is never written in place, the model's in-place ReLU only touches linear outputs, and the perturbation happens under no_grad.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 10), nn.ReLU(inplace=True), nn.Linear(10, 3))
images = torch.rand(4, 6)
labels = torch.tensor([0, 1, 2, 1])
eps = 0.1

x_adv = images.clone().requires_grad_(True)
loss = F.cross_entropy(model(x_adv), labels)
(grad,) = torch.autograd.grad(loss, x_adv)

with torch.no_grad():
    x_adv = x_adv + eps * grad.sign()
    x_adv.clamp_(0.0, 1.0)
    adv_logits = model(x_adv)

adv_loss = F.cross_entropy(adv_logits, labels)

# label: hazard silent
# why: sub_/div_ rebind `inp` to the normalised tensor, so the attack gradient is taken w.r.t. the normalised input, not the raw pixels
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(12, 20), nn.ReLU(), nn.Linear(20, 3))
mean = torch.full((12,), 0.45)
std = torch.full((12,), 0.25)

raw = torch.rand(6, 12)
delta = torch.zeros(6, 12, requires_grad=True)
labels = torch.tensor([0, 1, 2, 0, 1, 2])

inp = raw + delta
normed = inp.sub_(mean).div_(std)  # <-- IPL006
logits = model(normed)
loss = F.cross_entropy(logits, labels)

# FGSM step in raw-pixel space
(grad_inp,) = torch.autograd.grad(loss, inp, retain_graph=True)
eps = 8.0 / 255.0
adv = (raw + eps * grad_inp.sign()).clamp(0.0, 1.0)

loss.backward()
delta_grad = delta.grad

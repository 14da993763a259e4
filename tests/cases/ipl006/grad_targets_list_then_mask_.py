# label: hazard silent
# why: feats holds h2, which is then masked in place; autograd.grad(loss, feats) differentiates w.r.t. the masked tensor instead of the unmasked feature
import torch
import torch.nn as nn

torch.manual_seed(0)

layer1 = nn.Linear(4, 4)
layer2 = nn.Linear(4, 4)
head = nn.Linear(4, 1)
x = torch.randn(3, 4)
keep = torch.tensor([1.0, 0.0, 1.0, 0.5])

h1 = layer1(x)
h2 = layer2(torch.tanh(h1))
feats = [h1, h2]
h2.mul_(keep)  # <-- IPL006
loss = head(h2).pow(2).sum()
grads = torch.autograd.grad(loss, feats)
grad_norms = torch.stack([g.norm() for g in grads])

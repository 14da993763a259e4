# label: safe
# why: out-of-place F.relu keeps h as the pre-activation, so the gradient is the intended 0/1 mask; the in-place relu_ happens after autograd.grad
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

enc = nn.Linear(4, 6)
x = torch.randn(3, 4)

h = enc(x)
(dh,) = torch.autograd.grad(F.relu(h).sum(), h, retain_graph=True)
dead_fraction = (dh == 0).float().mean()
act = h.detach().clone()
act.relu_()

# label: safe
# why: the in-place normalisation `v /= v.norm()` acts on a fresh probe vector (a clone of the detached Hessian-vector product), while both autograd.grad calls differentiate w.r.t. the weight, which is never written.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd as ag

torch.manual_seed(0)

net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
x = torch.randn(10, 4)
t = torch.randn(10, 1)
w = net[0].weight

loss = F.mse_loss(net(x), t)
(g,) = ag.grad(loss, w, create_graph=True)

v = torch.randn_like(w)
v /= v.norm()
for _ in range(10):
    (hv,) = ag.grad((g * v).sum(), w, retain_graph=True)
    top_eig = (hv * v).sum()
    v = hv.detach().clone()
    v /= v.norm()

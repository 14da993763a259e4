# label: safe
# why: the gradient penalty differentiates w.r.t. an untouched interpolation leaf, and the critic's in-place LeakyReLU (positive slope) only rewrites linear outputs, which double backward handles.
import torch
import torch.nn as nn

torch.manual_seed(0)

critic = nn.Sequential(
    nn.Linear(3, 8), nn.LeakyReLU(0.2, inplace=True),
    nn.Linear(8, 8), nn.LeakyReLU(0.2, inplace=True),
    nn.Linear(8, 1),
)
real = torch.randn(5, 3)
fake = torch.randn(5, 3)
lam = 10.0

alpha = torch.rand(5, 1)
interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
d_interp = critic(interp)
(grad_interp,) = torch.autograd.grad(
    d_interp, interp, grad_outputs=torch.ones_like(d_interp), create_graph=True
)
gp = lam * ((grad_interp.norm(2, dim=1) - 1) ** 2).mean()
loss_d = critic(fake).mean() - critic(real).mean() + gp
loss_d.backward()
grad_first = critic[0].weight.grad

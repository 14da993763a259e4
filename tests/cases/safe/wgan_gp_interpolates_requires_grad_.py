# label: safe
# why: the gradient-penalty interpolates are a fresh tensor marked with requires_grad_(), which changes no data, and the grad target is never modified in place.
import torch
import torch.nn as nn

torch.manual_seed(0)

critic = nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True), nn.Linear(8, 1))
gen = nn.Linear(2, 4)

real = torch.randn(5, 4)
z = torch.randn(5, 2)
fake = gen(z).detach()

alpha = torch.rand(5, 1)
interp = alpha * real + (1 - alpha) * fake
interp.requires_grad_(True)
scores = critic(interp)
(grads,) = torch.autograd.grad(scores.sum(), interp, create_graph=True)
gp = ((grads.norm(2, dim=1) - 1) ** 2).mean()

loss = critic(fake).mean() - critic(real).mean() + 10.0 * gp
loss.backward()

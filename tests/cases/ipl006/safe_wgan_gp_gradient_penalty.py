# label: safe
# why: WGAN-GP: autograd.grad w.r.t. the interpolates with create_graph; the critic's LeakyReLU(inplace=True) only writes Linear outputs
import torch
import torch.nn as nn

torch.manual_seed(0)

critic = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2, inplace=True), nn.Linear(8, 8), nn.LeakyReLU(0.2, inplace=True), nn.Linear(8, 1))
gen = nn.Sequential(nn.Linear(2, 4), nn.Tanh())

real = torch.randn(5, 4)
fake = gen(torch.randn(5, 2))
alpha = torch.rand(5, 1)
interp = (alpha * real + (1 - alpha) * fake.detach()).requires_grad_(True)
d_interp = critic(interp)
(grad_interp,) = torch.autograd.grad(d_interp.sum(), interp, create_graph=True)
gp = ((grad_interp.norm(2, dim=1) - 1) ** 2).mean()
d_loss = critic(fake.detach()).mean() - critic(real).mean() + 10.0 * gp
d_loss.backward()

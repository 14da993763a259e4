# label: safe
# why: the penalty differentiates w.r.t. a fresh leaf interpolate that is never written; the critic's LeakyReLU(inplace=True) only rewrites its own hidden Linear outputs.
import torch
import torch.nn as nn

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(inplace=True), nn.Linear(16, 6), nn.Tanh())
D = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2, inplace=True), nn.Linear(16, 1))

real = torch.rand(8, 6) * 2 - 1
fake = G(torch.randn(8, 4)).detach()
alpha = torch.rand(8, 1)
interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
d_out = D(interp)
(grads,) = torch.autograd.grad(d_out, interp, grad_outputs=torch.ones_like(d_out), create_graph=True)
gp = ((grads.norm(2, dim=1) - 1) ** 2).mean()
d_loss = D(fake).mean() - D(real).mean() + 10.0 * gp
d_loss.backward()

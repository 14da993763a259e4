# label: safe no-twin
# why: the gradient penalty differentiates the critic w.r.t. a freshly built interpolate, and the only in-place writes are requires_grad_ on that fresh tensor and the optimizer steps after backward.
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.0, 0.9))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.0, 0.9))
real = torch.randn(8, 4) + 1.0
lambda_gp = 10.0

for it in range(2):
    fake = G(torch.randn(8, 3))
    alpha = torch.rand(8, 1)
    interp = alpha * real + (1 - alpha) * fake.detach()
    interp.requires_grad_(True)
    d_interp = D(interp)
    grads, = torch.autograd.grad(d_interp.sum(), interp, create_graph=True)
    gp = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    d_loss = D(fake.detach()).mean() - D(real).mean() + lambda_gp * gp
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()

    g_loss = -D(fake).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()

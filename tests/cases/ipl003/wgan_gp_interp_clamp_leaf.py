# label: hazard raises
# why: the interpolate is a leaf made to require grad for the penalty, so clamping it in place before autograd.grad(d_out, interp) raises.
import torch
import torch.nn as nn

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 6), nn.Tanh())
D = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

real = torch.rand(8, 6) * 2 - 1
fake = G(torch.randn(8, 4)).detach()
alpha = torch.rand(8, 1)
interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
interp.clamp_(-1.0, 1.0)  # <-- IPL003: interp is the grad target
d_out = D(interp)
(grads,) = torch.autograd.grad(d_out.sum(), interp, create_graph=True)
gp = ((grads.norm(2, dim=1) - 1) ** 2).mean()
d_loss = D(fake).mean() - D(real).mean() + 10.0 * gp
d_loss.backward()

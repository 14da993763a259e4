# label: safe
# why: WGAN-GP input gradient is taken w.r.t. a fresh leaf; the later in-place add_ lands on a mean() output that nothing saved
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
real = torch.randn(8, 4)
fake = torch.randn(8, 4)
lam = 10.0

alpha = torch.rand(8, 1)
interp = (alpha * real + (1 - alpha) * fake).detach()
interp.requires_grad_(True)
d_interp = critic(interp)
(grad_interp,) = torch.autograd.grad(
    d_interp.sum(), interp, create_graph=True
)
gp = ((grad_interp.norm(2, dim=1) - 1.0) ** 2).mean()

d_loss = critic(fake).mean() - critic(real).mean()
d_loss.add_(lam * gp)
d_loss.backward()

gp_value = gp.detach()
critic_grads = [p.grad.clone() for p in critic.parameters()]
first_layer_grad = critic_grads[0]

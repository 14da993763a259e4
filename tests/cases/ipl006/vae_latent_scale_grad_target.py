# label: hazard silent
# why: z is scaled in place by the latent scaling factor, so autograd.grad w.r.t. z returns the gradient of the scaled latent, not of the sampled one
import torch
import torch.nn as nn

torch.manual_seed(0)

LATENT_SCALE = 0.18215


class Encoder(nn.Module):
    def __init__(self, d_in=6, d_lat=4):
        super().__init__()
        self.mu = nn.Linear(d_in, d_lat)
        self.logvar = nn.Linear(d_in, d_lat)

    def forward(self, x):
        return self.mu(x), self.logvar(x)


enc = Encoder()
dec = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 6))

x = torch.randn(3, 6)
mu, logvar = enc(x)
eps = torch.randn_like(mu)
z = mu + torch.exp(0.5 * logvar) * eps
z_scaled = z.mul_(LATENT_SCALE)  # <-- IPL006
recon = dec(z_scaled)
loss = (recon - x).pow(2).mean()
(grad_z,) = torch.autograd.grad(loss, z, retain_graph=True)
latent_saliency = grad_z.abs().mean(0)
loss.backward()
mu_grad = enc.mu.weight.grad

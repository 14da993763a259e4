# label: safe
# why: the sinusoidal table is written into a fresh zeros buffer, and the noising/denoising steps rebind with x = x * c rather than mutating in place
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


def timestep_embedding(t, dim):
    emb = torch.zeros(t.shape[0], dim)
    freqs = torch.exp(-math.log(10000.0) * torch.arange(0, dim, 2).float() / dim)
    args = t.float()[:, None] * freqs[None]
    emb[:, 0::2] = torch.sin(args)
    emb[:, 1::2] = torch.cos(args)
    return emb


class Denoiser(nn.Module):
    def __init__(self, d=6, t_dim=8):
        super().__init__()
        self.t_proj = nn.Linear(t_dim, d)
        self.net = nn.Sequential(nn.Linear(d, 16), nn.SiLU(), nn.Linear(16, d))

    def forward(self, x, t):
        x = x + self.t_proj(timestep_embedding(t, 8))
        return self.net(x)


betas = torch.linspace(1e-4, 0.02, 50)
alpha_bar = torch.cumprod(1 - betas, 0)
model = Denoiser()
x0 = torch.randn(4, 6)
t = torch.tensor([3, 10, 25, 49])
noise = torch.randn_like(x0)
x_t = x0 * alpha_bar[t].sqrt()[:, None]
x_t = x_t + noise * (1 - alpha_bar[t]).sqrt()[:, None]
eps_pred = model(x_t, t)
loss = (eps_pred - noise).pow(2).mean()
loss.backward()
t_proj_grad = model.t_proj.weight.grad

# label: safe no-twin
# why: the WGAN weight clipping calls p.clamp_(-c, c) on every critic Parameter inside a function decorated with @torch.no_grad(), so the leaf check does not apply.
import torch
import torch.nn as nn

torch.manual_seed(0)

critic = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
gen = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-4)
opt_g = torch.optim.RMSprop(gen.parameters(), lr=5e-4)


@torch.no_grad()
def clip_weights(module, c=0.01):
    for p in module.parameters():
        p.clamp_(-c, c)


for it in range(3):
    real = torch.randn(8, 2) * 0.5 + 1.0
    for _ in range(2):
        fake = gen(torch.randn(8, 4)).detach()
        loss_c = critic(fake).mean() - critic(real).mean()
        opt_c.zero_grad()
        loss_c.backward()
        opt_c.step()
        clip_weights(critic)
    loss_g = -critic(gen(torch.randn(8, 4))).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()

w_max = max(p.abs().max() for p in critic.parameters()).detach()

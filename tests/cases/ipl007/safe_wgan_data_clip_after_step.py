# label: safe no-twin
# why: the classic WGAN critic loop clips p.data only after loss.backward() and opt.step(), when no pending graph still holds the critic weights.
import torch
import torch.nn as nn

torch.manual_seed(0)

critic = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
gen = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-4)
opt_g = torch.optim.RMSprop(gen.parameters(), lr=5e-4)
clip = 0.01

for it in range(3):
    for _ in range(3):
        real = torch.randn(8, 2) * 0.5 + 1.0
        fake = gen(torch.randn(8, 4)).detach()
        loss_c = critic(fake).mean() - critic(real).mean()
        opt_c.zero_grad()
        loss_c.backward()
        opt_c.step()
        for p in critic.parameters():
            p.data.clamp_(-clip, clip)
    loss_g = -critic(gen(torch.randn(8, 4))).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()

gen_out = gen(torch.randn(4, 4)).detach()

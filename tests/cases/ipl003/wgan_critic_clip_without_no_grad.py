# label: hazard raises
# why: after the critic step the WGAN loop clips every critic parameter with p.clamp_(-c, c) outside torch.no_grad(), and nn.Parameter leaves that require grad cannot be modified in place.
import torch
import torch.nn as nn

torch.manual_seed(0)

critic = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
gen = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-4)
clip = 0.01

real = torch.randn(8, 2) * 0.5 + 1.0
z = torch.randn(8, 4)
fake = gen(z).detach()

loss_c = critic(fake).mean() - critic(real).mean()
opt_c.zero_grad()
loss_c.backward()
opt_c.step()

for p in critic.parameters():
    p.clamp_(-clip, clip)  # <-- IPL003: parameter clipped in place with grad mode on

critic_score = critic(real).mean().detach()

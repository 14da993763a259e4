# label: hazard raises
# why: WGAN weight clipping with p.clamp_ on critic parameters outside no_grad modifies a leaf that requires grad.
import torch
import torch.nn as nn

torch.manual_seed(0)

critic = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
generator = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-4)
clip_value = 0.05

real = torch.randn(16, 2) + 2.0
for it in range(2):
    fake = generator(torch.randn(16, 3)).detach()
    loss_c = critic(fake).mean() - critic(real).mean()
    opt_c.zero_grad()
    loss_c.backward()
    opt_c.step()
    for p in critic.parameters():
        p.clamp_(-clip_value, clip_value)  # <-- IPL003: parameters are leaves

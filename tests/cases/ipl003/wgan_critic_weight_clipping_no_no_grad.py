# label: hazard raises
# why: WGAN weight clipping calls clamp_ directly on the critic's parameters outside torch.no_grad(), an in-place op on a leaf that requires grad.
import torch
import torch.nn as nn

torch.manual_seed(0)

critic = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-3)
real = torch.randn(6, 4) + 1.0
fake = torch.randn(6, 4)
clip_value = 0.05

opt.zero_grad()
loss_d = critic(fake).mean() - critic(real).mean()
loss_d.backward()
opt.step()

for p in critic.parameters():
    p.clamp_(-clip_value, clip_value)  # <-- IPL003

score = critic(real).mean()

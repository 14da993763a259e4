# label: safe no-twin
# why: WGAN critic weight clipping: clamp_ on parameters inside torch.no_grad() after the optimizer step is an intended state update
import torch
import torch.nn as nn

torch.manual_seed(0)

critic = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-4)
real = torch.randn(6, 4)
fake = torch.randn(6, 4)

for _ in range(2):
    loss = critic(fake).mean() - critic(real).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for p in critic.parameters():
            p.clamp_(-0.01, 0.01)

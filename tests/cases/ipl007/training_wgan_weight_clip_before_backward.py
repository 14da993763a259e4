# label: hazard silent
# why: WGAN weight clipping through .data runs between the critic forward and loss.backward(); backward silently uses the clipped weights
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.RMSprop(critic.parameters(), lr=5e-5)
clip_value = 0.05

real = torch.randn(6, 8)
fake = torch.randn(6, 8)

loss = critic(fake).mean() - critic(real).mean()
opt.zero_grad()
for p in critic.parameters():
    p.data.clamp_(-clip_value, clip_value)  # <-- IPL007
loss.backward()

first_grad = critic[0].weight.grad.clone()
opt.step()
critic_w = critic[0].weight.detach().clone()

# label: hazard silent
# why: the critic weights are clipped through p.data after the critic loss was built but before loss.backward(), so backward silently uses the clipped second-layer weight that the graph had saved.
import torch
import torch.nn as nn

torch.manual_seed(0)

critic = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
gen = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
opt_c = torch.optim.RMSprop(critic.parameters(), lr=5e-4)
clip = 0.05

real = torch.randn(8, 2) * 0.5 + 1.0
fake = gen(torch.randn(8, 4)).detach()

opt_c.zero_grad()
loss_c = critic(fake).mean() - critic(real).mean()
for p in critic.parameters():
    p.data.clamp_(-clip, clip)  # <-- IPL007: clip lands between forward and backward
loss_c.backward()
first_layer_grad = critic[0].weight.grad.clone()
opt_c.step()

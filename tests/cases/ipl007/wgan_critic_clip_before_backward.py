# label: hazard silent
# why: weight clipping through .data happens after the forward pass but before backward, so the saved weights used for the input gradients are the clipped ones
import torch
import torch.nn as nn

torch.manual_seed(0)

CLIP = 0.05

critic = nn.Sequential(
    nn.Linear(4, 16),
    nn.LeakyReLU(0.2),
    nn.Linear(16, 16),
    nn.LeakyReLU(0.2),
    nn.Linear(16, 1),
)
gen = nn.Linear(3, 4)

real = torch.randn(8, 4)
noise = torch.randn(8, 3)
fake = gen(noise)

d_real = critic(real).mean()
d_fake = critic(fake).mean()
g_loss = -d_fake
for p in critic.parameters():
    p.data.clamp_(-CLIP, CLIP)  # <-- IPL007
g_loss.backward()
gen_grad = gen.weight.grad
critic_first = critic[0].weight.grad

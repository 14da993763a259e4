# label: safe no-twin
# why: WGAN weight clipping through .data happens after the critic's backward and step, before the next forward, so no pending graph sees the change.
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-3)
opt_g = torch.optim.RMSprop(G.parameters(), lr=5e-3)
real = torch.randn(16, 4) + 1.0
clip = 0.05

for it in range(3):
    fake = G(torch.randn(16, 3))
    d_loss = -(D(real).mean() - D(fake.detach()).mean())
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    for p in D.parameters():
        p.data.clamp_(-clip, clip)

    g_loss = -D(fake).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()

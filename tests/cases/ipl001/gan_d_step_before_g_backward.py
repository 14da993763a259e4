# label: hazard raises no-twin
# why: the discriminator's optimizer step rewrites D's weights in place after the generator loss graph (which saved them) was built from the same forward pass, so g_loss.backward() fails.
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6))
D = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
real = torch.randn(16, 6) * 0.5 + 1.0
ones = torch.ones(16, 1)
zeros = torch.zeros(16, 1)

for it in range(2):
    z = torch.randn(16, 4)
    fake = G(z)
    d_real = D(real)
    d_fake = D(fake)
    d_loss = bce(d_real, ones) + bce(d_fake, zeros)
    g_loss = bce(d_fake, ones)

    opt_d.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_d.step()  # <-- IPL001: D weights saved by d_fake's graph are updated before g_loss.backward()

    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()

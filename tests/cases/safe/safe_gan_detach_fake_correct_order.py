# label: safe no-twin
# why: the discriminator trains on fake.detach() and the generator loss is built from a fresh D forward after D's step, so no optimizer step lands between a forward and its backward.
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

for it in range(3):
    z = torch.randn(16, 4)
    fake = G(z)

    opt_d.zero_grad()
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    d_loss.backward()
    opt_d.step()

    opt_g.zero_grad()
    g_loss = bce(D(fake), ones)
    g_loss.backward()
    opt_g.step()

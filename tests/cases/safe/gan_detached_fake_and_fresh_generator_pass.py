# label: safe
# why: the discriminator trains on fake.detach() and steps before the generator loss is built from a fresh D forward, so no saved weight is stale at backward.
import torch
import torch.nn as nn

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(3, 8), nn.ReLU(inplace=True), nn.Linear(8, 5))
D = nn.Sequential(nn.Linear(5, 8), nn.LeakyReLU(0.2, inplace=True), nn.Linear(8, 1))
opt_g = torch.optim.SGD(G.parameters(), lr=0.05)
opt_d = torch.optim.SGD(D.parameters(), lr=0.05)
bce = nn.BCEWithLogitsLoss()

real = torch.randn(4, 5)
for step in range(2):
    z = torch.randn(4, 3)
    fake = G(z)

    opt_d.zero_grad()
    d_loss = bce(D(real), torch.ones(4, 1)) + bce(D(fake.detach()), torch.zeros(4, 1))
    d_loss.backward()
    opt_d.step()

    opt_g.zero_grad()
    g_loss = bce(D(fake), torch.ones(4, 1))
    g_loss.backward()
    opt_g.step()

loss = g_loss.detach()

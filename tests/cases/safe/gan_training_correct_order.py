# label: safe
# why: the discriminator is trained on fake.detach() and stepped before the generator loss runs a fresh D(fake) forward, so no step precedes a backward that needs old weights
import torch
import torch.nn as nn

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True), nn.Linear(8, 6), nn.Tanh())
D = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2, inplace=True), nn.Linear(8, 1))
optG = torch.optim.Adam(G.parameters(), lr=1e-3)
optD = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
real = torch.randn(5, 6)
ones = torch.ones(5, 1)
zeros = torch.zeros(5, 1)

for step in range(2):
    z = torch.randn(5, 4)
    fake = G(z)
    d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    optD.zero_grad()
    d_loss.backward()
    optD.step()

    g_loss = bce(D(fake), ones)
    optG.zero_grad()
    g_loss.backward()
    optG.step()

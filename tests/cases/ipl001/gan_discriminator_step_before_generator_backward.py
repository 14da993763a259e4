# label: hazard raises no-twin
# why: optD.step() updates the discriminator weights in place while the generator loss still needs them from the saved graph.
import torch
from torch import nn, optim

torch.manual_seed(0)

latent_dim = 4
netG = nn.Sequential(nn.Linear(latent_dim, 16), nn.ReLU(), nn.Linear(16, 2))
netD = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optG = optim.Adam(netG.parameters(), lr=1e-3)
optD = optim.Adam(netD.parameters(), lr=1e-3)
criterion = nn.BCEWithLogitsLoss()

real_data = torch.randn(64, 2) * 0.5 + 1.0
for step in range(3):
    real = real_data[torch.randint(0, 64, (8,))]
    noise = torch.randn(8, latent_dim)
    fake = netG(noise)
    d_real = netD(real)
    d_fake = netD(fake)
    ones = torch.ones(8, 1)
    zeros = torch.zeros(8, 1)

    loss_d = criterion(d_real, ones) + criterion(d_fake, zeros)
    optD.zero_grad()
    loss_d.backward(retain_graph=True)
    optD.step()  # <-- IPL001: D weights saved by d_fake's graph are updated in place

    loss_g = criterion(d_fake, ones)
    optG.zero_grad()
    loss_g.backward()
    optG.step()

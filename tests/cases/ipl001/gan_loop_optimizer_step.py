# label: hazard raises no-twin
# why: opt_D.step() updates the discriminator weights in place after D(fake) saved them for the generator loss, whose backward runs later.
import torch
import torch.nn as nn

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_G = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()

real = torch.randn(8, 2) + 3.0
z = torch.randn(8, 4)
ones = torch.ones(8, 1)
zeros = torch.zeros(8, 1)

fake = G(z)
d_fake = D(fake)
loss_G = bce(d_fake, ones)

loss_D = bce(D(real), ones) + bce(D(fake.detach()), zeros)
opt_D.zero_grad()
loss_D.backward()
opt_D.step()  # <-- IPL001: D's weights were saved by D(fake) for loss_G

opt_G.zero_grad()
loss_G.backward()
opt_G.step()

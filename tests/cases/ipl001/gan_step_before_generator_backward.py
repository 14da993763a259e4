# label: hazard raises no-twin
# why: optD.step() updates D's weights in place between the forward through D and the generator's backward that still needs them
import torch
import torch.nn as nn

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6), nn.Tanh())
D = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
optG = torch.optim.Adam(G.parameters(), lr=1e-3)
optD = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()

real = torch.randn(5, 6)
z = torch.randn(5, 4)
ones = torch.ones(5, 1)
zeros = torch.zeros(5, 1)

fake = G(z)
d_fake = D(fake)
d_loss = bce(D(real), ones) + bce(d_fake, zeros)
optD.zero_grad()
d_loss.backward(retain_graph=True)
optD.step()  # <-- IPL001

g_loss = bce(d_fake, ones)
optG.zero_grad()
g_loss.backward()
optG.step()

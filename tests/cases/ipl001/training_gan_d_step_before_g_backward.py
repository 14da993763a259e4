# label: hazard raises no-twin
# why: d_opt.step() updates D's weights in place while g_loss's graph through D(fake) still needs them; g_loss.backward() hits a version mismatch
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
D = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
g_opt = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))
d_opt = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.999))

real = torch.randn(6, 8)
z = torch.randn(6, 4)
ones = torch.ones(6, 1)
zeros = torch.zeros(6, 1)

fake = G(z)
d_fake = D(fake)

# discriminator: reals vs detached fakes
d_loss = F.binary_cross_entropy_with_logits(D(real), ones) + \
    F.binary_cross_entropy_with_logits(D(fake.detach()), zeros)
# generator: reuse the D(fake) forward computed above to "save compute"
g_loss = F.binary_cross_entropy_with_logits(d_fake, ones)

d_opt.zero_grad()
d_loss.backward()
d_opt.step()  # <-- IPL001

g_opt.zero_grad()
g_loss.backward()
g_opt.step()

samples = fake.detach()
g_weight = G[0].weight.detach().clone()

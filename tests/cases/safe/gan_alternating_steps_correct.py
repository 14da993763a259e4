# label: safe
# why: D is trained on fake.detach(), and the generator loss re-runs D(fake) after d_opt.step(); LeakyReLU(inplace=True) follows a Linear whose output is not saved
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8), nn.Tanh())
D = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2, inplace=True), nn.Linear(16, 1))
g_opt = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))
d_opt = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.999))

for it in range(2):
    real = torch.randn(6, 8)
    z = torch.randn(6, 4)
    ones, zeros = torch.ones(6, 1), torch.zeros(6, 1)

    fake = G(z)
    d_loss = F.binary_cross_entropy_with_logits(D(real), ones) + \
        F.binary_cross_entropy_with_logits(D(fake.detach()), zeros)
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()

    g_loss = F.binary_cross_entropy_with_logits(D(fake), ones)
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()

g_w = G[0].weight.detach().clone()
d_w = D[0].weight.detach().clone()
samples = fake.detach()

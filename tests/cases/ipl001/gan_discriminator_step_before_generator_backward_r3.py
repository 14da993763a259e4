# label: hazard raises
# why: the discriminator's manual SGD step (an in-place parameter update) runs before the generator loss, whose graph saved D's weights, is backpropagated.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim=4, out_dim=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 8), nn.ReLU(), nn.Linear(8, out_dim))

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, in_dim=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x)


G, D = Generator(), Discriminator()
opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
lr_d = 0.1
bce = nn.BCEWithLogitsLoss()

real = torch.randn(5, 6)
z = torch.randn(5, 4)

fake = G(z)
d_real = D(real)
d_fake = D(fake)
ones, zeros = torch.ones(5, 1), torch.zeros(5, 1)

d_loss = bce(d_real, ones) + bce(d_fake, zeros)
g_loss = bce(d_fake, ones)

D.zero_grad()
d_loss.backward(retain_graph=True)
with torch.no_grad():
    for p in D.parameters():
        p.sub_(lr_d * p.grad)  # <-- IPL001

opt_g.zero_grad()
g_loss.backward()
opt_g.step()

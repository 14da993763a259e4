# label: hazard raises no-twin
# why: the generator and discriminator losses are built from the same forward pass, and the discriminator is updated with opt_d.step() before g_loss (whose adversarial term went through D) is backpropagated.
# source: https://github.com/ayu-22/BPPNet-Back-Projected-Pyramid-Network/issues/6
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class UNetBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.down = nn.Conv2d(ch, 8, 3, 2, 1)
        self.up = nn.ConvTranspose2d(8, ch, 4, 2, 1)

    def forward(self, x):
        return self.up(F.leaky_relu(self.down(x), 0.2))


class PyramidGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.levels = nn.ModuleList([UNetBlock(3) for _ in range(2)])
        self.fuse = nn.Conv2d(6, 3, 3, 1, 1)

    def forward(self, hazy):
        outs = [lvl(hazy) for lvl in self.levels]
        return torch.sigmoid(self.fuse(torch.cat(outs, 1)))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(
            nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.Conv2d(8, 16, 4, 2, 1), nn.BatchNorm2d(16), nn.LeakyReLU(0.2),
            nn.Conv2d(16, 1, 2),
        )

    def forward(self, x):
        return self.model(x)


def compute_losses(gen, disc, hazy, clear):
    dehazed = gen(hazy)
    d_real = disc(clear)
    d_fake = disc(dehazed)
    d_loss = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + F.binary_cross_entropy_with_logits(
        d_fake, torch.zeros_like(d_fake)
    )
    g_loss = F.mse_loss(dehazed, clear) + 0.01 * F.binary_cross_entropy_with_logits(d_fake, torch.ones_like(d_fake))
    return g_loss, d_loss, dehazed


gen = PyramidGenerator()
disc = Discriminator()
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(disc.parameters(), lr=1e-3)


def train(epochs):
    for epoch in range(epochs):
        hazy = torch.rand(2, 3, 8, 8)
        clear = torch.rand(2, 3, 8, 8)
        g_loss, d_loss, dehazed = compute_losses(gen, disc, hazy, clear)
        opt_d.zero_grad()
        d_loss.backward(retain_graph=True)
        opt_d.step()  # <-- IPL001: D's weights change before g_loss is backpropagated through D
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()


train(1)

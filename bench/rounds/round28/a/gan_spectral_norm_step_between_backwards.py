# label: hazard raises no-twin
# why: the discriminator optimizer step rewrites weight_orig in place between two backward passes over one retained graph, but the spectral-norm division and the linear layer saved the old parameters for the second backward.
# source: https://github.com/pytorch/pytorch/issues/55368
import torch
import torch.nn as nn
from torch.nn.utils import spectral_norm

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim=4, out_dim=2):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(z_dim, 8), nn.ReLU(), nn.Linear(8, out_dim))

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, in_dim=2):
        super().__init__()
        self.fc1 = spectral_norm(nn.Linear(in_dim, 5))
        self.act = nn.LeakyReLU(0.2)
        self.fc2 = spectral_norm(nn.Linear(5, 1))

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def train_step(netG, netD, opt_d, opt_g, z):
    # remember the generator output and reuse one discriminator pass for both players
    fake = netG(z)
    output = netD(fake)
    loss = output.abs().mean()

    opt_d.zero_grad()
    loss.backward(retain_graph=True)
    opt_d.step()  # <-- IPL001

    opt_g.zero_grad()
    loss.backward()
    opt_g.step()
    return loss.item()


def main():
    netG = Generator()
    netD = Discriminator()
    opt_d = torch.optim.SGD(netD.parameters(), lr=1e-3)
    opt_g = torch.optim.SGD(netG.parameters(), lr=1e-3)
    z = torch.randn(7, 4)
    loss = train_step(netG, netD, opt_d, opt_g, z)
    print(loss)
    return netG.main[0].weight.detach().clone()


g_weight = main()

# label: safe no-twin
# why: after optimD.step() changes D's weights in place, the generator loss is computed from a fresh d = D(g) forward, so the graph that lossG.backward() walks saved the updated weights and nothing is stale.
# source: https://blog.csdn.net/odbej/article/details/125158288
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, nz=8, img_dim=64):
        super(Generator, self).__init__()
        self.main = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, img_dim), nn.Tanh())

    def forward(self, t):
        return self.main(t)


class Discriminator(nn.Module):
    def __init__(self, img_dim=64):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(nn.Linear(img_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, x):
        return self.main(x)


def main():
    G = Generator()
    D = Discriminator()
    optimG = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimD = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    criterion = nn.BCELoss()

    real = torch.rand(4, 64) * 2 - 1
    t = torch.randn(4, 8)
    ones = torch.ones(4, 1)
    zeros = torch.zeros(4, 1)

    g = G(t)

    # train D on a detached fake
    optimD.zero_grad()
    lossD = criterion(D(real), ones) + criterion(D(g.detach()), zeros)
    lossD.backward()
    optimD.step()

    # train G: rebuild d with the updated D
    optimG.zero_grad()
    d = D(g)
    lossG = criterion(d, ones)
    lossG.backward()
    optimG.step()
    return G.main[0].weight.detach().clone(), D.main[0].weight.detach().clone()


g_weight, d_weight = main()

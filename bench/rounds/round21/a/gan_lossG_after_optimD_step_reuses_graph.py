# label: hazard raises no-twin
# why: d = D(g) is built once and lossD.backward(retain_graph=True) is followed by optimD.step(), which updates D's weights in place; lossG.backward() then walks the retained graph whose Linear nodes saved those weights at the old version.
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
    d = D(g)

    # train D
    optimD.zero_grad()
    lossD = criterion(D(real), ones) + criterion(d, zeros)
    lossD.backward(retain_graph=True)
    optimD.step()  # <-- IPL001

    # train G on the same graph
    optimG.zero_grad()
    lossG = criterion(d, ones)
    lossG.backward()
    optimG.step()
    return G.main[0].weight.detach().clone(), D.main[0].weight.detach().clone()


g_weight, d_weight = main()

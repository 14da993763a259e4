# label: hazard raises no-twin
# why: the generator is updated first (optim_g.step() modifies G's weights in place), then loss_d.backward() runs through the same non-detached G(z) graph that was kept alive with retain_graph=True, which needs the old generator weights
# source: https://whosebug.com/question/5232549/How-does-PyTorch-s-loss-backward-work-when-retain-graph-True-is-specified
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, nz=6, nout=10):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, nout), nn.Tanh())

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, nin=10):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nin, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, x):
        return self.main(x)


def compute_losses(G, D, real, z, criterion):
    fake = G(z)
    pred_fake = D(fake)
    pred_real = D(real)
    ones = torch.ones_like(pred_real)
    zeros = torch.zeros_like(pred_fake)
    loss_g = criterion(pred_fake, ones)
    loss_d = 0.5 * (criterion(pred_real, ones) + criterion(pred_fake, zeros))
    return loss_g, loss_d


G, D = Generator(), Discriminator()
optim_g = torch.optim.Adam(G.parameters(), lr=1e-3)
optim_d = torch.optim.Adam(D.parameters(), lr=1e-3)
criterion = nn.BCELoss()

real = torch.randn(4, 10)
z = torch.randn(4, 6)

# computing loss_g and loss_d...
loss_g, loss_d = compute_losses(G, D, real, z, criterion)

optim_g.zero_grad()
loss_g.backward(retain_graph=True)
optim_g.step()  # <-- IPL001: G's weights change in place while loss_d's graph still goes through G(z)

optim_d.zero_grad()
loss_d.backward()
optim_d.step()

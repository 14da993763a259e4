# label: safe
# why: each backward method is preceded by its own forward in update(), so the generator step comes after the only backward through the graph forward() kept; the later backward goes through a fresh forward.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Model:
    def __init__(self):
        self.netG = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
        self.netE = nn.Linear(4, 2)
        self.opt_G = torch.optim.Adam(self.netG.parameters(), lr=1e-3)
        self.opt_E = torch.optim.Adam(self.netE.parameters(), lr=1e-3)

    def update(self):
        self.forward()
        self.opt_G.zero_grad()
        self.backward_G()
        self.opt_G.step()
        self.opt_E.zero_grad()
        self.backward_E()
        self.opt_E.step()

    def set_input(self, x):
        self.real = x

    def forward(self):
        self.fake = self.netG(self.real)

    def backward_G(self):
        loss = F.l1_loss(self.fake, self.real)
        loss.backward()

    def backward_E(self):
        code = self.netE(self.fake.detach())
        loss = (code ** 2).mean()
        loss.backward()


model = Model()
model.set_input(torch.randn(3, 4))
model.update()
weight = model.netE.weight.detach().clone()

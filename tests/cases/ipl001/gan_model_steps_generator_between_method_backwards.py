# label: hazard raises no-twin
# why: forward() keeps the generated images on self; update() steps the generator between the two backward methods, and the second one differentiates the kept graph, whose generator weights were saved before the step.
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

    def set_input(self, x):
        self.real = x

    def forward(self):
        self.fake = self.netG(self.real)
        self.code = self.netE(self.fake)

    def backward_G(self):
        loss = F.l1_loss(self.fake, self.real)
        loss.backward(retain_graph=True)

    def backward_E(self):
        loss = (self.code ** 2).mean()
        loss.backward()

    def update(self):
        self.opt_G.zero_grad()
        self.backward_G()
        self.opt_G.step()  # <-- IPL001: backward_E still differentiates the generator graph forward() kept
        self.opt_E.zero_grad()
        self.backward_E()
        self.opt_E.step()


model = Model()
model.set_input(torch.randn(3, 4))
model.forward()
model.update()

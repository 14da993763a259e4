# label: safe no-twin
# why: PyTorch DCGAN loop: the discriminator is stepped only after its own backward, and the generator's loss is taken from a *fresh* netD(fake) forward built after optimizerD.step(), so no pending graph holds the updated weights.
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz=3, ngf=8, out=6):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(nz, ngf, bias=False),
            nn.BatchNorm1d(ngf),
            nn.ReLU(True),
            nn.Linear(ngf, out),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, inp=6, ndf=8):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(inp, ndf),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(ndf, 1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.main(x).view(-1)


torch.manual_seed(0)
netG, netD = Generator(), Discriminator()
criterion = nn.BCELoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0

for it in range(3):
    real = torch.randn(8, 6)
    netD.zero_grad()
    label = torch.full((8,), real_label)
    errD_real = criterion(netD(real), label)
    errD_real.backward()
    noise = torch.randn(8, 3)
    fake = netG(noise)
    label.fill_(fake_label)
    errD_fake = criterion(netD(fake.detach()), label)
    errD_fake.backward()
    optimizerD.step()

    netG.zero_grad()
    label.fill_(real_label)
    errG = criterion(netD(fake), label)
    errG.backward()
    optimizerG.step()

final_errD = (errD_real + errD_fake).detach()
final_errG = errG.detach()

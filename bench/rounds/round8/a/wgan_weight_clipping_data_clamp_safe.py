# label: safe no-twin
# why: WGAN clamps the critic's weights through p.data.clamp_() at the start of each critic iteration, before any forward pass, so no live graph sees the rewrite.
# source: https://github.com/martinarjovsky/WassersteinGAN/issues/50
import torch
import torch.nn as nn

torch.manual_seed(0)


class DCGAN_D(nn.Module):
    def __init__(self, nc=1, ndf=4):
        super(DCGAN_D, self).__init__()
        main = nn.Sequential()
        main.add_module("initial:{0}-{1}:conv".format(nc, ndf), nn.Conv2d(nc, ndf, 4, 2, 1, bias=False))
        main.add_module("initial:{0}:relu".format(ndf), nn.LeakyReLU(0.2, inplace=True))
        main.add_module("final:{0}-{1}:conv".format(ndf, 1), nn.Conv2d(ndf, 1, 4, 1, 0, bias=False))
        self.main = main

    def forward(self, input):
        output = self.main(input)
        output = output.mean(0)
        return output.view(1)


class DCGAN_G(nn.Module):
    def __init__(self, nz=4, nc=1, ngf=4):
        super(DCGAN_G, self).__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf, 4, 1, 0, bias=False),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


netD, netG = DCGAN_D(), DCGAN_G()
optimizerD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
optimizerG = torch.optim.RMSprop(netG.parameters(), lr=5e-5)
one = torch.FloatTensor([1])
mone = one * -1
clamp_lower, clamp_upper = -0.01, 0.01

for gen_iterations in range(2):
    for p in netD.parameters():
        p.requires_grad = True
    for j in range(2):
        for p in netD.parameters():
            p.data.clamp_(clamp_lower, clamp_upper)
        real_cpu = torch.rand(3, 1, 8, 8) * 2 - 1
        netD.zero_grad()
        errD_real = netD(real_cpu)
        errD_real.backward(one)
        noise = torch.randn(3, 4, 1, 1)
        with torch.no_grad():
            fake = netG(noise)
        errD_fake = netD(fake)
        errD_fake.backward(mone)
        errD = errD_real - errD_fake
        optimizerD.step()

    for p in netD.parameters():
        p.requires_grad = False
    netG.zero_grad()
    noise = torch.randn(3, 4, 1, 1)
    fake = netG(noise)
    errG = netD(fake)
    errG.backward(one)
    optimizerG.step()

# label: hazard silent
# why: BCELoss saves `label` for backward; refilling it with fake_label through label.data before the single errD.backward() bypasses the version counter, so the real branch is differentiated against fake targets and D gets a silently wrong gradient.
# source: https://github.com/sunshineatnoon/Paper-Implementations/issues/4 (pix2pix/train.py @6b83f26)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Discriminator(nn.Module):
    def __init__(self, input_nc, output_nc, ndf):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Conv2d(input_nc + output_nc, ndf, 4, 2, 1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(ndf, 1, 4, 1, 0),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.main(x).view(-1)


class Generator(nn.Module):
    def __init__(self, input_nc, output_nc, ngf):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            nn.Conv2d(input_nc, ngf, 3, 1, 1),
            nn.ReLU(),
            nn.Conv2d(ngf, output_nc, 3, 1, 1),
            nn.Tanh(),
        )

    def forward(self, x):
        return self.main(x)


def main():
    input_nc, output_nc, ndf, ngf, fineSize = 3, 3, 8, 8, 8
    netD = Discriminator(input_nc, output_nc, ndf)
    netG = Generator(input_nc, output_nc, ngf)
    criterion = nn.BCELoss()

    real_A = torch.randn(2, input_nc, fineSize, fineSize)
    real_B = torch.randn(2, output_nc, fineSize, fineSize)
    label = torch.FloatTensor(2)
    real_label = 1
    fake_label = 0

    ########### fDx ###########
    netD.zero_grad()
    real_AB = torch.cat((real_A, real_B), 1)
    output = netD(real_AB)
    label.data.fill_(real_label)
    errD_real = criterion(output, label)

    # train with fake
    fake_B = netG(real_A)
    fake_AB = torch.cat((real_A, fake_B), 1)
    output = netD(fake_AB.detach())
    label.data.fill_(fake_label)  # <-- IPL007
    errD_fake = criterion(output, label)

    errD = errD_fake + errD_real
    errD.backward()
    return errD.detach(), netD.main[0].weight.grad.clone()


errD, grad = main()

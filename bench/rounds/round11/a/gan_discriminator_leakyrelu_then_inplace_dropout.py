# label: hazard raises
# why: in the discriminator's Sequential, Dropout(inplace=True) overwrites the output of LeakyReLU(inplace=True), which LeakyReLU saved for its backward.
# source: https://github.com/pytorch/pytorch/issues/72992
import torch
import torch.nn as nn

torch.manual_seed(0)


class Discriminator(nn.Module):
    def __init__(self, nc=3, ndf=8):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Dropout(0.25, inplace=True),  # <-- IPL001: in-place dropout on the LeakyReLU output saved for backward
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 2, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


netD = Discriminator()
criterion = nn.BCELoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
real_cpu = torch.randn(4, 3, 8, 8)
label = torch.full((4,), 1.0)

netD.zero_grad()
output = netD(real_cpu)
errD_real = criterion(output, label)
errD_real.backward()
optimizerD.step()

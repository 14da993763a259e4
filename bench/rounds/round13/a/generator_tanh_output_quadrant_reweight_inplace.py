# label: hazard raises no-twin
# why: the generator's last nn.Tanh output (which TanhBackward saves) is re-weighted quadrant by quadrant with slice assignment `x11[:, :, :h, :w] = x11[:, :, :h, :w] * xx1[0]`, overwriting the saved tanh result.
# source: https://github.com/pytorch/pytorch/issues/1321
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, nz=8, ngf=4):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, 3, 4, 2, 1, bias=False),
            nn.Tanh(),
        )
        self.quadrant_weight = nn.Parameter(torch.ones(4))

    def forward(self, z):
        x11 = self.main(z)
        xx1 = self.quadrant_weight
        w_f, h_f = x11.size(2), x11.size(3)
        x11[:, :, 0:int(w_f / 2), 0:int(h_f / 2)] = x11[:, :, 0:int(w_f / 2), 0:int(h_f / 2)] * xx1[0]  # <-- IPL001: overwrites the Tanh output saved for backward
        x11[:, :, int(w_f / 2):, int(h_f / 2):] = x11[:, :, int(w_f / 2):, int(h_f / 2):] * xx1[3]  # <-- IPL001: overwrites the Tanh output saved for backward
        return x11


netG = Generator()
netD = nn.Sequential(nn.Conv2d(3, 4, 4, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(4 * 4 * 4, 1))
criterion = nn.BCEWithLogitsLoss()
noise = torch.randn(2, 8, 1, 1)
fake = netG(noise)
errG = criterion(netD(fake), torch.ones(2, 1))
errG.backward()

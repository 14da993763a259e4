# label: hazard silent
# why: WGAN critic weights are clipped through `.data` after the critic forward but before backward, so backward silently uses clipped weights the forward never saw.
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self, in_dim=4, hidden=8):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(in_dim, hidden),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(hidden, hidden),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.main(x).mean()


torch.manual_seed(0)
netD = Critic()
netG = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
clamp_lower, clamp_upper = -0.05, 0.05

real = torch.randn(8, 4)
noise = torch.randn(8, 2)
errD_real = netD(real)
errD_fake = netD(netG(noise))
errD = errD_fake - errD_real
for p in netD.parameters():
    p.data.clamp_(clamp_lower, clamp_upper)  # <-- IPL007: weights saved by the pending critic graph
errD.backward()

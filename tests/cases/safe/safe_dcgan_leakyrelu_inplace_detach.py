# label: safe
# why: DCGAN loop done right: D is trained on fake.detach(), G's loss uses a fresh D forward after optD.step(), and LeakyReLU(inplace=True) follows Linear/BatchNorm outputs.
import torch
from torch import nn, optim

torch.manual_seed(0)

netG = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(True), nn.Linear(16, 2))
netD = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2, inplace=True), nn.Linear(16, 1))
optG = optim.SGD(netG.parameters(), lr=0.01)
optD = optim.SGD(netD.parameters(), lr=0.01)
criterion = nn.BCEWithLogitsLoss()

real_data = torch.randn(64, 2) * 0.5 + 1.0
for step in range(3):
    real = real_data[step * 8:(step + 1) * 8]
    noise = torch.randn(8, 4)
    ones = torch.ones(8, 1)
    zeros = torch.zeros(8, 1)

    fake = netG(noise)
    loss_d = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
    optD.zero_grad()
    loss_d.backward()
    optD.step()

    loss_g = criterion(netD(fake), ones)
    optG.zero_grad()
    loss_g.backward()
    optG.step()

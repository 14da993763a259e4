# label: safe
# why: conv -> BatchNorm -> LeakyReLU(inplace=True) saves nothing the ReLU overwrites, and the generator step re-runs D after opt_D.step(), so no step sits between a forward and its backward.
import torch
import torch.nn as nn

torch.manual_seed(0)

G = nn.Sequential(
    nn.ConvTranspose2d(8, 4, 4, 2, 1, bias=False),
    nn.BatchNorm2d(4),
    nn.ReLU(True),
    nn.ConvTranspose2d(4, 1, 4, 2, 1, bias=False),
    nn.Tanh(),
)
D = nn.Sequential(
    nn.Conv2d(1, 4, 4, 2, 1, bias=False),
    nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(4, 8, 4, 2, 1, bias=False),
    nn.BatchNorm2d(8),
    nn.LeakyReLU(0.2, inplace=True),
    nn.Flatten(),
    nn.Linear(8 * 2 * 2, 1),
)
opt_G = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_D = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()

real = torch.randn(4, 1, 8, 8)
noise = torch.randn(4, 8, 2, 2)
ones, zeros = torch.ones(4, 1), torch.zeros(4, 1)

# discriminator step
fake = G(noise)
loss_D = bce(D(real), ones) + bce(D(fake.detach()), zeros)
opt_D.zero_grad()
loss_D.backward()
opt_D.step()

# generator step: fresh D forward after D was updated
loss_G = bce(D(fake), ones)
opt_G.zero_grad()
loss_G.backward()
opt_G.step()

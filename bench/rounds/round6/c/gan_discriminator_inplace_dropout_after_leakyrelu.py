# label: hazard raises
# why: in the discriminator, Dropout(inplace=True) overwrites the output of LeakyReLU(inplace=True), which the in-place leaky_relu saved for its backward, so D_loss.backward() fails.
# source: https://github.com/dreamgonfly/GAN-tutorial/issues/1 (GAN.ipynb Discriminator; fix: drop inplace=True from LeakyReLU and Dropout)
import torch
import torch.nn as nn
from torch.optim import Adam

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(in_features=16, out_features=32),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(in_features=32, out_features=64),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(in_features=64, out_features=8 * 8),
            nn.Tanh())

    def forward(self, inputs):
        return self.main(inputs).view(-1, 1, 8, 8)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(in_features=8 * 8, out_features=64),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Dropout(inplace=True),  # <-- IPL001: overwrites the LeakyReLU output saved for backward
            nn.Linear(in_features=64, out_features=32),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Dropout(inplace=True),  # <-- IPL001: overwrites the LeakyReLU output saved for backward
            nn.Linear(in_features=32, out_features=16),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Dropout(inplace=True),  # <-- IPL001: overwrites the LeakyReLU output saved for backward
            nn.Linear(in_features=16, out_features=1),
            nn.Sigmoid())

    def forward(self, inputs):
        inputs = inputs.view(-1, 8 * 8)
        return self.main(inputs)


G = Generator()
D = Discriminator()
criterion = nn.BCELoss()
G_optimizer = Adam(G.parameters(), lr=0.0002, betas=(0.5, 0.999))
D_optimizer = Adam(D.parameters(), lr=0.0002, betas=(0.5, 0.999))

real_data = torch.rand(6, 1, 8, 8) * 2 - 1
batch_size = real_data.size(0)

target_real = torch.ones(batch_size, 1)
target_fake = torch.zeros(batch_size, 1)

D_result_from_real = D(real_data)
D_loss_real = criterion(D_result_from_real, target_real)

z = torch.randn((batch_size, 16))
fake_data = G(z)
D_result_from_fake = D(fake_data)
D_loss_fake = criterion(D_result_from_fake, target_fake)

D_loss = D_loss_real + D_loss_fake
D.zero_grad()
D_loss.backward()
D_optimizer.step()

z = torch.randn((batch_size, 16))
fake_data = G(z)
D_result_from_fake = D(fake_data)
G_loss = criterion(D_result_from_fake, target_real)
G.zero_grad()
G_loss.backward()
G_optimizer.step()

# label: safe
# why: the fix from the issue thread steps D first and then runs a fresh G/E/D forward for loss_ge, so no graph outlives the in-place parameter update.
# source: https://github.com/mperezcarrasco/PyTorch-BiGAN/issues/1
import torch
import torch.nn as nn
from torch import optim
from torch.autograd import Variable

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim=4):
        super(Generator, self).__init__()
        self.output_bias = nn.Parameter(torch.zeros(1, 8, 8), requires_grad=True)
        self.deconv1 = nn.ConvTranspose2d(z_dim, 4, 4, stride=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.deconv2 = nn.ConvTranspose2d(4, 1, 4, stride=2, padding=1, bias=False)

    def forward(self, z):
        z = nn.functional.leaky_relu(self.bn1(self.deconv1(z)), negative_slope=0.1)
        return torch.sigmoid(self.deconv2(z) + self.output_bias)


class Encoder(nn.Module):
    def __init__(self, z_dim=4):
        super(Encoder, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 4, stride=2, padding=1, bias=False)
        self.conv2 = nn.Conv2d(4, z_dim, 4, stride=1, bias=True)

    def forward(self, x):
        x = nn.functional.leaky_relu(self.conv1(x), negative_slope=0.1)
        return self.conv2(x)


class Discriminator(nn.Module):
    def __init__(self, z_dim=4):
        super(Discriminator, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 4, stride=2, padding=1, bias=False)
        self.fc_z = nn.Linear(z_dim, 8)
        self.fc = nn.Linear(4 * 4 * 4 + 8, 1)

    def forward(self, x, z):
        x = nn.functional.leaky_relu(self.conv1(x), negative_slope=0.1).view(x.size(0), -1)
        z = nn.functional.leaky_relu(self.fc_z(z.view(z.size(0), -1)), negative_slope=0.1)
        return torch.sigmoid(self.fc(torch.cat((x, z), dim=1)))


class TrainerBiGAN:
    def __init__(self, data, latent_dim=4, num_epochs=1):
        self.train_loader = data
        self.latent_dim = latent_dim
        self.num_epochs = num_epochs

    def train(self):
        self.G = Generator(self.latent_dim)
        self.E = Encoder(self.latent_dim)
        self.D = Discriminator(self.latent_dim)
        optimizer_ge = optim.Adam(list(self.G.parameters()) + list(self.E.parameters()), lr=1e-4)
        optimizer_d = optim.Adam(self.D.parameters(), lr=1e-4)
        criterion = nn.BCELoss()
        for epoch in range(self.num_epochs):
            for x, _ in self.train_loader:
                y_true = Variable(torch.ones((x.size(0), 1)))
                y_fake = Variable(torch.zeros((x.size(0), 1)))
                noise1 = Variable(torch.Tensor(x.size()).normal_(0, 0.1), requires_grad=False)
                noise2 = Variable(torch.Tensor(x.size()).normal_(0, 0.1), requires_grad=False)

                optimizer_d.zero_grad()
                optimizer_ge.zero_grad()

                z_fake = Variable(torch.randn((x.size(0), self.latent_dim, 1, 1)), requires_grad=False)
                x_fake = self.G(z_fake)
                x_true = x.float()
                z_true = self.E(x_true)

                out_true = self.D(x_true + noise1, z_true)
                out_fake = self.D(x_fake + noise2, z_fake)

                loss_d = criterion(out_true, y_true) + criterion(out_fake, y_fake)
                loss_d.backward()
                optimizer_d.step()

                optimizer_ge.zero_grad()
                z_fake = Variable(torch.randn((x.size(0), self.latent_dim, 1, 1)), requires_grad=False)
                x_fake = self.G(z_fake)
                z_true = self.E(x_true)
                out_true = self.D(x_true + noise1, z_true)
                out_fake = self.D(x_fake + noise2, z_fake)
                loss_ge = criterion(out_fake, y_true) + criterion(out_true, y_fake)
                loss_ge.backward()
                optimizer_ge.step()
        return loss_d, loss_ge


data = [(torch.rand(2, 1, 8, 8), torch.zeros(2))]
trainer = TrainerBiGAN(data)
loss_d, loss_ge = trainer.train()

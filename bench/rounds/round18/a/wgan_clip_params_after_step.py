# label: safe no-twin
# why: the critic weights are clamped through p.data after D_optimizer.step(), when no graph that saved them is still waiting for backward; the next forward sees the clipped values.
# source: https://github.com/znxlwm/pytorch-generative-model-collections/issues/31
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class generator(nn.Module):
    def __init__(self, input_dim=4, output_dim=6):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(input_dim, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, output_dim), nn.Tanh())

    def forward(self, z):
        return self.fc(z)


class discriminator(nn.Module):
    def __init__(self, input_dim=6):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(input_dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.fc(x)


class WGAN(object):
    def __init__(self):
        self.batch_size = 8
        self.z_dim = 4
        self.c = 0.01
        self.n_critic = 2
        self.G = generator(self.z_dim)
        self.D = discriminator()
        self.G_optimizer = optim.Adam(self.G.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.D_optimizer = optim.Adam(self.D.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.train_hist = {"D_loss": [], "G_loss": []}

    def train(self, data):
        self.D.train()
        for iter, x_ in enumerate(data):
            z_ = torch.rand((self.batch_size, self.z_dim))
            # update D network
            self.D_optimizer.zero_grad()
            D_real = self.D(x_)
            D_real_loss = -torch.mean(D_real)
            G_ = self.G(z_)
            D_fake = self.D(G_)
            D_fake_loss = torch.mean(D_fake)
            D_loss = D_real_loss + D_fake_loss
            D_loss.backward()
            self.D_optimizer.step()

            # clipping D
            for p in self.D.parameters():
                p.data.clamp_(-self.c, self.c)

            if ((iter + 1) % self.n_critic) == 0:
                # update G network
                self.G_optimizer.zero_grad()
                G_ = self.G(z_)
                D_fake = self.D(G_)
                G_loss = -torch.mean(D_fake)
                self.train_hist["G_loss"].append(G_loss.detach())
                G_loss.backward()
                self.G_optimizer.step()
                self.train_hist["D_loss"].append(D_loss.detach())
        return D_loss, G_loss


gan = WGAN()
data = [torch.randn(8, 6) for _ in range(4)]
D_loss, G_loss = gan.train(data)
G = gan.G
D = gan.D

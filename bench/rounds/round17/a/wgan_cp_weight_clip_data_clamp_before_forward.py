# label: safe no-twin
# why: the critic's weights are clamped through p.data.clamp_ at the top of each critic iteration, before any forward pass uses them, and the LeakyReLU(inplace=True)/ReLU(True) layers follow BatchNorm, whose backward does not need its output, so every in-place write is harmless (no-twin: rewriting p.data.clamp_ out of place only rebinds the loop variable and drops the clipping)
# source: https://github.com/Zeleni9/pytorch-wgan/pull/53 (models/wgan_clipping.py, WGAN_CP.train)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(torch.nn.Module):
    def __init__(self, channels, nz=8):
        super().__init__()
        self.main_module = nn.Sequential(
            nn.ConvTranspose2d(in_channels=nz, out_channels=16, kernel_size=4, stride=1, padding=0),
            nn.BatchNorm2d(num_features=16),
            nn.ReLU(True),
            nn.ConvTranspose2d(in_channels=16, out_channels=8, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm2d(num_features=8),
            nn.ReLU(True),
            nn.ConvTranspose2d(in_channels=8, out_channels=channels, kernel_size=4, stride=2, padding=1))
        self.output = nn.Tanh()

    def forward(self, x):
        x = self.main_module(x)
        return self.output(x)


class Discriminator(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.main_module = nn.Sequential(
            nn.Conv2d(in_channels=channels, out_channels=8, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm2d(num_features=8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(in_channels=8, out_channels=16, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm2d(num_features=16),
            nn.LeakyReLU(0.2, inplace=True))
        self.output = nn.Sequential(
            nn.Conv2d(in_channels=16, out_channels=1, kernel_size=4, stride=1, padding=0))

    def forward(self, x):
        x = self.main_module(x)
        return self.output(x)


class WGAN_CP(object):
    def __init__(self, channels=1):
        self.G = Generator(channels)
        self.D = Discriminator(channels)
        self.learning_rate = 0.00005
        self.batch_size = 4
        self.weight_clipping_limit = 0.01
        self.d_optimizer = torch.optim.RMSprop(self.D.parameters(), lr=self.learning_rate)
        self.g_optimizer = torch.optim.RMSprop(self.G.parameters(), lr=self.learning_rate)
        self.generator_iters = 2
        self.critic_iter = 3

    def train(self, batches):
        one = torch.FloatTensor([1])
        mone = one * -1
        data = iter(batches)
        for g_iter in range(self.generator_iters):
            for p in self.D.parameters():
                p.requires_grad = True

            for d_iter in range(self.critic_iter):
                self.D.zero_grad()

                # Clamp parameters to a range [-c, c], c=self.weight_clipping_limit
                for p in self.D.parameters():
                    p.data.clamp_(-self.weight_clipping_limit, self.weight_clipping_limit)

                images = next(data)
                z = torch.randn((self.batch_size, 8, 1, 1))

                d_loss_real = self.D(images)
                d_loss_real = d_loss_real.mean(0).view(1)
                d_loss_real.backward(one)

                fake_images = self.G(z)
                d_loss_fake = self.D(fake_images)
                d_loss_fake = d_loss_fake.mean(0).view(1)
                d_loss_fake.backward(mone)

                d_loss = d_loss_fake - d_loss_real
                Wasserstein_D = d_loss_real - d_loss_fake
                self.d_optimizer.step()

            for p in self.D.parameters():
                p.requires_grad = False  # to avoid computation

            self.G.zero_grad()
            z = torch.randn(self.batch_size, 8, 1, 1)
            fake_images = self.G(z)
            g_loss = self.D(fake_images)
            g_loss = g_loss.mean().mean(0).view(1)
            g_loss.backward(mone)
            g_cost = -g_loss
            self.g_optimizer.step()
        return d_loss, g_loss, Wasserstein_D


model = WGAN_CP()
batches = [torch.rand(4, 1, 16, 16) * 2 - 1 for _ in range(6)]
d_loss, g_loss, Wasserstein_D = model.train(batches)
G = model.G
D = model.D

# label: hazard raises no-twin
# why: the discriminator optimizer steps (in-place parameter update) after the generator loss was built through the discriminator, so the generator backward finds D's saved weights modified
# source: https://github.com/Lightning-AI/pytorch-lightning/issues/2820
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, latent=4, out_dim=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent, 8), nn.LeakyReLU(0.2), nn.Linear(8, out_dim))

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, inp=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(inp, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x)


def d_logistic_loss(real_pred, fake_pred):
    return F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()


def g_nonsaturating_loss(fake_pred):
    return F.softplus(-fake_pred).mean()


class StyleGAN2Module(nn.Module):
    def __init__(self, lr=0.01, g_reg_ratio=4 / 5, d_reg_ratio=16 / 17):
        super().__init__()
        self.generator = Generator()
        self.discriminator = Discriminator()
        self.g_optim = optim.Adam(self.generator.parameters(), lr=lr * g_reg_ratio, betas=(0.0, 0.99 ** g_reg_ratio))
        self.d_optim = optim.Adam(self.discriminator.parameters(), lr=lr * d_reg_ratio, betas=(0.0, 0.99 ** d_reg_ratio))

    def training_step(self, real_img):
        noise = torch.randn(real_img.shape[0], 4)
        fake_img = self.generator(noise)
        fake_pred = self.discriminator(fake_img)
        real_pred = self.discriminator(real_img)

        d_loss = d_logistic_loss(real_pred, fake_pred)
        g_loss = g_nonsaturating_loss(fake_pred)

        self.d_optim.zero_grad()
        d_loss.backward(retain_graph=True)
        self.d_optim.step()  # <-- IPL001: D weights updated in place while g_loss's graph still needs them

        self.g_optim.zero_grad()
        g_loss.backward()
        self.g_optim.step()
        return d_loss.detach(), g_loss.detach()


module = StyleGAN2Module()
real = torch.randn(5, 6)
d_loss, g_loss = module.training_step(real)

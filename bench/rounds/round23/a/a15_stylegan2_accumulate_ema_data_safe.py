# label: safe no-twin
# why: accumulate() writes the EMA generator through .data (mul_/add_), but g_ema is a separate copy that is never part of a graph being differentiated, and it runs only after d_loss/g_loss backward and the optimizer steps.
# source: https://github.com/rosinality/stylegan2-pytorch/blob/master/train.py
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def accumulate(model1, model2, decay=0.999):
    par1 = dict(model1.named_parameters())
    par2 = dict(model2.named_parameters())

    for k in par1.keys():
        par1[k].data.mul_(decay).add_(par2[k].data, alpha=1 - decay)


def d_logistic_loss(real_pred, fake_pred):
    real_loss = F.softplus(-real_pred)
    fake_loss = F.softplus(fake_pred)
    return real_loss.mean() + fake_loss.mean()


def g_nonsaturating_loss(fake_pred):
    loss = F.softplus(-fake_pred).mean()
    return loss


class Generator(nn.Module):
    def __init__(self, style_dim=8, size=8):
        super().__init__()
        self.size = size
        self.style = nn.Sequential(nn.Linear(style_dim, style_dim), nn.LeakyReLU(0.2))
        self.to_img = nn.Linear(style_dim, 3 * size * size)

    def forward(self, noise):
        w = self.style(noise)
        return torch.tanh(self.to_img(w)).view(-1, 3, self.size, self.size), w


class Discriminator(nn.Module):
    def __init__(self, size=8):
        super().__init__()
        self.convs = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.LeakyReLU(0.2))
        self.final_linear = nn.Linear(4 * size * size, 1)

    def forward(self, x):
        return self.final_linear(self.convs(x).flatten(1))


def train(generator, discriminator, g_optim, d_optim, g_ema, loader, accum=0.5 ** (32 / (10 * 1000))):
    for real_img in loader:
        requires_grad(generator, False)
        requires_grad(discriminator, True)
        noise = torch.randn(real_img.shape[0], 8)
        fake_img, _ = generator(noise)
        fake_pred = discriminator(fake_img)
        real_pred = discriminator(real_img)
        d_loss = d_logistic_loss(real_pred, fake_pred)
        discriminator.zero_grad()
        d_loss.backward()
        d_optim.step()

        requires_grad(generator, True)
        requires_grad(discriminator, False)
        noise = torch.randn(real_img.shape[0], 8)
        fake_img, _ = generator(noise)
        fake_pred = discriminator(fake_img)
        g_loss = g_nonsaturating_loss(fake_pred)
        generator.zero_grad()
        g_loss.backward()
        g_optim.step()

        accumulate(g_ema, generator, accum)
    return d_loss.detach(), g_loss.detach()


def main():
    generator = Generator()
    discriminator = Discriminator()
    g_ema = copy.deepcopy(generator)
    g_ema.eval()
    accumulate(g_ema, generator, 0)
    g_optim = torch.optim.Adam(generator.parameters(), lr=0.002, betas=(0.0, 0.99))
    d_optim = torch.optim.Adam(discriminator.parameters(), lr=0.002, betas=(0.0, 0.99))
    loader = [torch.rand(2, 3, 8, 8) * 2 - 1 for _ in range(3)]
    d_loss, g_loss = train(generator, discriminator, g_optim, d_optim, g_ema, loader)
    with torch.no_grad():
        sample, _ = g_ema(torch.randn(1, 8))
    return d_loss, g_loss, sample


d_loss, g_loss, sample = main()

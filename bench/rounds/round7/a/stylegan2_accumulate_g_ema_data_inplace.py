# label: safe no-twin
# why: accumulate() blends the generator into g_ema with par1[k].data.mul_().add_() after the optimizer steps; g_ema is never part of a graph that is still to be backpropagated.
# source: https://github.com/rosinality/stylegan2-pytorch/issues/34
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, style_dim=4):
        super().__init__()
        self.style = nn.Sequential(nn.Linear(style_dim, style_dim), nn.LeakyReLU(0.2))
        self.to_rgb = nn.Linear(style_dim, 3 * 8 * 8)

    def forward(self, styles):
        w = self.style(styles[0])
        return torch.tanh(self.to_rgb(w)).view(-1, 3, 8, 8), w


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.LeakyReLU(0.2))
        self.final = nn.Linear(4 * 4 * 4, 1)

    def forward(self, x):
        return self.final(self.convs(x).flatten(1))


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def accumulate(model1, model2, decay=0.999):
    par1 = dict(model1.named_parameters())
    par2 = dict(model2.named_parameters())
    for k in par1.keys():
        par1[k].data.mul_(decay).add_(par2[k].data, alpha=1 - decay)


def d_logistic_loss(real_pred, fake_pred):
    return F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()


def d_r1_loss(real_pred, real_img):
    grad_real, = autograd.grad(outputs=real_pred.sum(), inputs=real_img, create_graph=True)
    return grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()


def g_nonsaturating_loss(fake_pred):
    return F.softplus(-fake_pred).mean()


generator = Generator()
discriminator = Discriminator()
g_ema = Generator()
g_ema.eval()
accumulate(g_ema, generator, 0)
g_optim = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.0, 0.99))
d_optim = torch.optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.0, 0.99))
accum = 0.5 ** (32 / (10 * 1000))
sample_z = torch.randn(2, 4)

for idx in range(3):
    real_img = torch.rand(2, 3, 8, 8) * 2 - 1

    requires_grad(generator, False)
    requires_grad(discriminator, True)
    noise = [torch.randn(2, 4)]
    fake_img, _ = generator(noise)
    fake_pred = discriminator(fake_img)
    real_pred = discriminator(real_img)
    d_loss = d_logistic_loss(real_pred, fake_pred)
    discriminator.zero_grad()
    d_loss.backward()
    d_optim.step()

    if idx % 2 == 0:
        real_img.requires_grad = True
        real_pred = discriminator(real_img)
        r1_loss = d_r1_loss(real_pred, real_img)
        discriminator.zero_grad()
        (10 / 2 * r1_loss * 2 + 0 * real_pred[0]).backward()
        d_optim.step()

    requires_grad(generator, True)
    requires_grad(discriminator, False)
    noise = [torch.randn(2, 4)]
    fake_img, _ = generator(noise)
    fake_pred = discriminator(fake_img)
    g_loss = g_nonsaturating_loss(fake_pred)
    generator.zero_grad()
    g_loss.backward()
    g_optim.step()

    accumulate(g_ema, generator, accum)

with torch.no_grad():
    sample, _ = g_ema([sample_z])

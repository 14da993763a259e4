# label: safe
# why: HiFi-GAN accumulates its losses with loss += ... starting from a Python 0, so every in-place add lands on a fresh sum tensor that no backward node saved; the fmap lists hold the leaky_relu outputs, which are never written.
# source: https://github.com/jik876/hifi-gan/blob/0ddee25de32f806719ca91e98e3514d312408aef/models.py
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Conv1d
from torch.nn.utils import weight_norm

torch.manual_seed(0)

LRELU_SLOPE = 0.1


class DiscriminatorS(torch.nn.Module):
    def __init__(self):
        super(DiscriminatorS, self).__init__()
        norm_f = weight_norm
        self.convs = nn.ModuleList([
            norm_f(Conv1d(1, 8, 15, 1, padding=7)),
            norm_f(Conv1d(8, 16, 41, 2, groups=4, padding=20)),
            norm_f(Conv1d(16, 16, 5, 1, padding=2)),
        ])
        self.conv_post = norm_f(Conv1d(16, 1, 3, 1, padding=1))

    def forward(self, x):
        fmap = []
        for l in self.convs:
            x = l(x)
            x = F.leaky_relu(x, LRELU_SLOPE)
            fmap.append(x)
        x = self.conv_post(x)
        fmap.append(x)
        x = torch.flatten(x, 1, -1)
        return x, fmap


class MultiScaleDiscriminator(torch.nn.Module):
    def __init__(self):
        super(MultiScaleDiscriminator, self).__init__()
        self.discriminators = nn.ModuleList([DiscriminatorS(), DiscriminatorS()])
        self.meanpools = nn.ModuleList([nn.AvgPool1d(4, 2, padding=2)])

    def forward(self, y, y_hat):
        y_d_rs, y_d_gs, fmap_rs, fmap_gs = [], [], [], []
        for i, d in enumerate(self.discriminators):
            if i != 0:
                y = self.meanpools[i - 1](y)
                y_hat = self.meanpools[i - 1](y_hat)
            y_d_r, fmap_r = d(y)
            y_d_g, fmap_g = d(y_hat)
            y_d_rs.append(y_d_r)
            fmap_rs.append(fmap_r)
            y_d_gs.append(y_d_g)
            fmap_gs.append(fmap_g)
        return y_d_rs, y_d_gs, fmap_rs, fmap_gs


def feature_loss(fmap_r, fmap_g):
    loss = 0
    for dr, dg in zip(fmap_r, fmap_g):
        for rl, gl in zip(dr, dg):
            loss += torch.mean(torch.abs(rl - gl))
    return loss * 2


def discriminator_loss(disc_real_outputs, disc_generated_outputs):
    loss = 0
    r_losses = []
    g_losses = []
    for dr, dg in zip(disc_real_outputs, disc_generated_outputs):
        r_loss = torch.mean((1 - dr) ** 2)
        g_loss = torch.mean(dg ** 2)
        loss += (r_loss + g_loss)
        r_losses.append(r_loss.item())
        g_losses.append(g_loss.item())
    return loss, r_losses, g_losses


def generator_loss(disc_outputs):
    loss = 0
    gen_losses = []
    for dg in disc_outputs:
        l = torch.mean((1 - dg) ** 2)
        gen_losses.append(l)
        loss += l
    return loss, gen_losses


def main():
    msd = MultiScaleDiscriminator()
    generator = nn.Sequential(nn.Conv1d(1, 1, 7, padding=3), nn.Tanh())
    y = torch.randn(2, 1, 256)
    y_g_hat = generator(torch.randn(2, 1, 256))

    y_ds_hat_r, y_ds_hat_g, _, _ = msd(y, y_g_hat.detach())
    loss_disc_s, _, _ = discriminator_loss(y_ds_hat_r, y_ds_hat_g)
    loss_disc_s.backward()
    disc_grad = msd.discriminators[0].convs[0].weight_v.grad.clone()

    msd.zero_grad()
    y_ds_hat_r, y_ds_hat_g, fmap_s_r, fmap_s_g = msd(y, y_g_hat)
    loss_fm_s = feature_loss(fmap_s_r, fmap_s_g)
    loss_gen_s, _ = generator_loss(y_ds_hat_g)
    loss_gen_all = loss_gen_s + loss_fm_s
    loss_gen_all.backward()
    return disc_grad, generator[0].weight.grad, loss_gen_all.detach()


disc_grad, gen_grad, gen_loss = main()

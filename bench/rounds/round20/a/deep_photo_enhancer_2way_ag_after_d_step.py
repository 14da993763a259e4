# label: hazard raises no-twin
# why: the generator loss reuses ag, which was computed from discriminator_x/discriminator_y outputs before optimizer_dx.step()/optimizer_dy.step(); the steps overwrite the discriminator weights that those convolutions saved, so g_loss.backward() hits a stale saved tensor.
# source: https://github.com/mtics/deep-photo-enhancer/issues/9
import itertools

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)

LEARNING_RATE = 1e-3
BETA1, BETA2 = 0.5, 0.999
ALPHA = 0.1
LAMBDA = 10.0


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 16, 5, padding=2), nn.SELU(), nn.Conv2d(16, 3, 5, padding=2))

    def forward(self, x):
        return x + self.conv(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 16, 5, padding=2), nn.LeakyReLU(0.2), nn.Conv2d(16, 1, 5, padding=2))

    def forward(self, x):
        return self.conv(x).mean(dim=(1, 2, 3))


def computeAdversarialLosses(dx, dx1, dy, dy1):
    ad = torch.mean(dx) - torch.mean(dx1) + torch.mean(dy) - torch.mean(dy1)
    ag = torch.mean(dx1) + torch.mean(dy1)
    return ad, ag


def computeIdentityMappingLoss(x, x1, y, y1):
    criterion = nn.MSELoss()
    return criterion(x, y1).mean() + criterion(y, x1).mean()


def computeCycleConsistencyLoss(x, x2, y, y2):
    criterion = nn.MSELoss()
    return criterion(x, y2).mean() + criterion(y, x2).mean()


def computeGeneratorLossFor2WayGan(ag, i_loss, c_loss):
    return -ag + ALPHA * i_loss + 10 * ALPHA * c_loss


def main():
    generator_xy, generator_yx = Generator(), Generator()
    discriminator_x, discriminator_y = Discriminator(), Discriminator()
    optimizer_g_xy = optim.Adam(generator_xy.parameters(), lr=LEARNING_RATE, betas=(BETA1, BETA2))
    optimizer_g_yx = optim.Adam(generator_yx.parameters(), lr=LEARNING_RATE, betas=(BETA1, BETA2))
    optimizer_dx = optim.Adam(discriminator_x.parameters(), lr=LEARNING_RATE, betas=(BETA1, BETA2))
    optimizer_dy = optim.Adam(discriminator_y.parameters(), lr=LEARNING_RATE, betas=(BETA1, BETA2))

    batches_done = 0
    x = torch.rand(2, 3, 8, 8)
    y = torch.rand(2, 3, 8, 8)

    # TRAIN DISCRIMINATOR
    optimizer_dx.zero_grad()
    optimizer_dy.zero_grad()
    y1 = generator_xy(x)
    x1 = generator_yx(y)
    dy = discriminator_y(y)
    dy1 = discriminator_y(y1)
    dx = discriminator_x(x)
    dx1 = discriminator_x(x1)
    ad, ag = computeAdversarialLosses(dx, dx1, dy, dy1)
    d_loss = ad
    d_loss.backward(retain_graph=True)
    torch.nn.utils.clip_grad_value_(itertools.chain(discriminator_y.parameters(), discriminator_x.parameters()), 1e8)
    optimizer_dx.step()  # <-- IPL001
    optimizer_dy.step()  # <-- IPL001

    # TRAIN GENERATOR
    if batches_done % 50 == 0:
        optimizer_g_xy.zero_grad()
        optimizer_g_yx.zero_grad()
        y1 = generator_xy(x)
        x1 = generator_yx(y)
        x2 = generator_yx(y1)
        y2 = generator_xy(x1)
        i_loss = computeIdentityMappingLoss(x, x1, y, y1)
        c_loss = computeCycleConsistencyLoss(x, x2, y, y2)
        g_loss = computeGeneratorLossFor2WayGan(ag, i_loss, c_loss)
        g_loss.backward(retain_graph=True)
        optimizer_g_xy.step()
        optimizer_g_yx.step()
    return d_loss.detach(), g_loss.detach()


d_loss, g_loss = main()

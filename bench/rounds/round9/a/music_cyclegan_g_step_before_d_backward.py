# label: hazard raises no-twin
# why: the generator optimizers step (in-place weight updates) before d_A_loss.backward(retain_graph=True), but the discriminator losses reach back through the un-detached fakes into the generators' saved weights
# source: https://github.com/Asthestarsfalll/Symbolic-Music-Genre-Transfer-with-CycleGAN-for-pytorch/issues/2
import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F
from torch import optim

torch.manual_seed(0)
np.random.seed(0)


def kernel_initializer(w, mean=0., std=0.02):
    return nn.init.normal_(w, mean, std)


def padding(x, p=3):
    return F.pad(x, (p, p, p, p), mode='reflect')


def cycle_loss(real_a, cycle_a, real_b, cycle_b):
    return F.l1_loss(cycle_a, real_a, reduction='mean') + F.l1_loss(cycle_b, real_b, reduction='mean')


class ResNetBlock(nn.Module):
    def __init__(self, dim, kernel_size=3, stride=1):
        super(ResNetBlock, self).__init__()
        self.p = (kernel_size - 1) // 2
        self.layer1 = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size, stride, bias=False),
            nn.InstanceNorm2d(dim, affine=True),
            nn.ReLU(inplace=True)
        )
        self.layer2 = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size, stride, bias=False),
            nn.InstanceNorm2d(dim, affine=True),
        )
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = padding(x, self.p)
        y = self.layer1(y)
        y = padding(y, self.p)
        y = self.layer2(y)
        out = self.relu(x + y)
        return out


class Discriminator(nn.Module):
    def __init__(self, dim=4):
        super(Discriminator, self).__init__()
        self.discriminator = nn.Sequential(
            nn.Conv2d(1, dim, 7, 2, padding=3, bias=False),
            nn.LeakyReLU(negative_slope=0.2, inplace=True),
            nn.Conv2d(dim, 4 * dim, 7, 2, padding=3, bias=False),
            nn.InstanceNorm2d(4 * dim, affine=True),
            nn.LeakyReLU(negative_slope=0.2, inplace=True),
            nn.Conv2d(4 * dim, 1, 7, 1, padding=3, bias=False)
        )

    def forward(self, x):
        return self.discriminator(x)


class Generator(nn.Module):
    def __init__(self, dim=4):
        super(Generator, self).__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, dim, 7, 1, bias=False),
            nn.InstanceNorm2d(dim, affine=True),
            nn.ReLU(inplace=True),
            nn.Conv2d(dim, 2 * dim, 3, 2, padding=1, bias=False),
            nn.InstanceNorm2d(2 * dim, affine=True),
            nn.ReLU(inplace=True),
        )
        self.ResNet = nn.Sequential(*[ResNetBlock(2 * dim, 3, 1) for i in range(2)])
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(2 * dim, dim, 3, 2, padding=1, output_padding=1, bias=False),
            nn.InstanceNorm2d(dim, affine=True),
            nn.ReLU(inplace=True),
        )
        self.output = nn.Conv2d(dim, 1, 7, 1, bias=False)

    def forward(self, x):
        x = padding(x)
        x = self.encoder(x)
        for i in range(2):
            x = self.ResNet[i](x)
        x = self.decoder(x)
        x = padding(x)
        x = self.output(x)
        return torch.sigmoid(x)


class Sampler(object):
    def __init__(self, max_length=50):
        self.maxsize = max_length
        self.num = 0
        self.images = []

    def __call__(self, image):
        if self.maxsize <= 0:
            return image
        if self.num < self.maxsize:
            self.images.append(image)
            self.num += 1
            return image
        return image


class CycleGAN(nn.Module):
    def __init__(self, sigma=0.01, sample_size=50, lamb=10):
        super(CycleGAN, self).__init__()
        self.G_A2B = Generator()
        self.G_B2A = Generator()
        self.D_A = Discriminator()
        self.D_B = Discriminator()
        self.l2loss = nn.MSELoss(reduction='mean')
        self.sigma = sigma
        self.sampler = Sampler(sample_size)
        self.lamb = lamb

    def forward(self, real_A, real_B):
        fake_B = self.G_A2B(real_A)
        cycle_A = self.G_B2A(fake_B)
        fake_A = self.G_B2A(real_B)
        cycle_B = self.G_A2B(fake_A)

        [sample_fake_A, sample_fake_B] = self.sampler([fake_A, fake_B])
        gauss_noise = torch.ones_like(real_A)
        gauss_noise = torch.abs(kernel_initializer(gauss_noise, mean=0, std=self.sigma))

        DA_real = self.D_A(real_A + gauss_noise)
        DB_real = self.D_B(real_B + gauss_noise)
        DA_fake = self.D_A(fake_A + gauss_noise)
        DB_fake = self.D_B(fake_B + gauss_noise)
        DA_fake_sample = self.D_A(sample_fake_A + gauss_noise)
        DB_fake_sample = self.D_B(sample_fake_B + gauss_noise)

        c_loss = self.lamb * cycle_loss(real_A, cycle_A, real_B, cycle_B)
        g_A2B_loss = self.l2loss(DB_fake, torch.ones_like(DB_fake)) + c_loss
        g_B2A_loss = self.l2loss(DA_fake, torch.ones_like(DA_fake)) + c_loss

        d_A_loss = (self.l2loss(DA_real, torch.ones_like(DA_real)) +
                    self.l2loss(DA_fake_sample, torch.zeros_like(DA_fake_sample))) / 2
        d_B_loss = (self.l2loss(DB_real, torch.ones_like(DB_real)) +
                    self.l2loss(DB_fake_sample, torch.zeros_like(DB_fake_sample))) / 2
        return c_loss, g_A2B_loss, g_B2A_loss, d_A_loss, d_B_loss


model = CycleGAN()
lr = 0.002
optimizer_GA2B = optim.Adam(model.G_A2B.parameters(), lr=lr, betas=(0.5, 0.999))
optimizer_GB2A = optim.Adam(model.G_B2A.parameters(), lr=lr, betas=(0.5, 0.999))
optimizer_DA = optim.Adam(model.D_A.parameters(), lr=lr, betas=(0.5, 0.999))
optimizer_DB = optim.Adam(model.D_B.parameters(), lr=lr, betas=(0.5, 0.999))

real_a = torch.rand(2, 1, 8, 8)
real_b = torch.rand(2, 1, 8, 8)

optimizer_GA2B.zero_grad()
optimizer_GB2A.zero_grad()
optimizer_DA.zero_grad()
optimizer_DB.zero_grad()

cycle_loss_val, g_A2B_loss, g_B2A_loss, d_A_loss, d_B_loss = model(real_a, real_b)
g_loss = g_A2B_loss + g_B2A_loss - cycle_loss_val
D_loss = d_A_loss + d_B_loss

g_A2B_loss.backward(retain_graph=True)
g_B2A_loss.backward(retain_graph=True)
optimizer_GA2B.step()  # <-- IPL001: updates G_A2B's weights in place while the D losses' graph still needs them
optimizer_GB2A.step()  # <-- IPL001: same for G_B2A (sample_fake_A is not detached)

d_A_loss.backward(retain_graph=True)
d_B_loss.backward(retain_graph=True)
optimizer_DA.step()
optimizer_DB.step()

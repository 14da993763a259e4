# label: hazard raises
# why: every discriminator stage is Conv -> LeakyReLU(inplace=True) -> Dropout(inplace=True); the in-place dropout overwrites the LeakyReLU result that LeakyReLU saved for backward.
# source: https://github.com/Randl/improved-improved-wgan-pytorch/issues/1
from collections import OrderedDict

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(42)


class WGAN(nn.Module):
    def __init__(self):
        super(WGAN, self).__init__()


class WGANGenerator(WGAN):
    def __init__(self, input_size=8, num_filters=4, out_channels=3, output_size=16, activation=nn.ReLU):
        super(WGANGenerator, self).__init__()
        self.activation = activation
        self.out_size = output_size
        first_filter = (self.out_size // 8) * num_filters
        self.first_fc = nn.Sequential(nn.Linear(input_size, first_filter * 4 * 4), activation(inplace=True))
        self.conv_trans = self._make_conv_trans(first_filter)
        self.final_conv_trans = nn.Sequential(
            nn.ConvTranspose2d(num_filters, out_channels, kernel_size=5, stride=2, padding=2, output_padding=1, bias=False),
            nn.Tanh())

    def forward(self, x):
        x = self.first_fc(x.squeeze())
        x = x.view(x.shape[0], -1, 4, 4)
        x = self.conv_trans(x)
        return self.final_conv_trans(x)

    def _make_conv_trans(self, num_filters):
        modules = OrderedDict()
        for i in range(int(np.log2(self.out_size)) - 3):
            name = "ConvTranspose_{}".format(i + 1)
            modules[name] = nn.Sequential(
                nn.ConvTranspose2d(num_filters, num_filters // 2, kernel_size=5, stride=2, padding=2, output_padding=1, bias=False),
                nn.BatchNorm2d(num_filters // 2),
                self.activation(inplace=True))
            num_filters //= 2
        return nn.Sequential(modules)


class WGANDiscriminator(WGAN):
    def __init__(self, input_size=16, in_channels=3, num_filters=4, activation=nn.LeakyReLU, dropout_rate=0.5):
        super(WGANDiscriminator, self).__init__()
        self.activation = activation
        self.input_size = input_size
        self.dropout_rate = dropout_rate
        self.first_conv = nn.Sequential(nn.Conv2d(in_channels, num_filters, kernel_size=5, stride=2, padding=2),
                                        activation(inplace=True),
                                        nn.Dropout(p=dropout_rate, inplace=True))  # <-- IPL001: overwrites the saved LeakyReLU result
        self.conv, last_filter = self._make_conv(num_filters)
        self.final_fc = nn.Linear(last_filter * 4 * 4, 1)

    def forward(self, x):
        x = self.first_conv(x)
        pre_last = self.conv(x)
        pre_last = pre_last.view(pre_last.shape[0], -1)
        x = self.final_fc(pre_last)
        return x, pre_last

    def _make_conv(self, num_filters):
        modules = OrderedDict()
        for i in range(int(np.log2(self.input_size)) - 3):
            name = "Conv_{}".format(i + 1)
            modules[name] = nn.Sequential(
                nn.Conv2d(num_filters, num_filters * 2, kernel_size=5, stride=2, padding=2),
                self.activation(inplace=True),
                nn.Dropout(p=self.dropout_rate, inplace=True))  # <-- IPL001: same pattern in every stage built by the loop
            num_filters *= 2
        return nn.Sequential(modules), num_filters


def gradient_penalty(fake_data, real_data, discriminator):
    alpha = torch.FloatTensor(fake_data.shape[0], 1, 1, 1).uniform_(0, 1).expand(fake_data.shape)
    interpolates = alpha * fake_data + (1 - alpha) * real_data
    interpolates = Variable(interpolates, requires_grad=True)
    disc_interpolates, _ = discriminator(interpolates)
    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(disc_interpolates.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def consistency_term(real_data, discriminator, Mtag=0):
    d1, d_1 = discriminator(real_data)
    d2, d_2 = discriminator(real_data)
    consistency_term = (d1 - d2).norm(2, dim=1) + 0.1 * (d_1 - d_2).norm(2, dim=1) - Mtag
    return consistency_term.mean()


netG = WGANGenerator()
netD = WGANDiscriminator()
optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-4)
lambda1, lambda2 = 10.0, 2.0

real_inputs = Variable(torch.rand(2, 3, 16, 16) * 2 - 1)
for p in netD.parameters():
    p.requires_grad = True
optimizerD.zero_grad()
errD_real, _ = netD(real_inputs)
errD_real = -errD_real
noise = torch.FloatTensor(real_inputs.shape[0], 8, 1, 1).normal_(0, 1)
with torch.no_grad():
    fake_inputs = netG(noise)
errD_fake, _ = netD(fake_inputs)
errD = errD_real.mean(0) + errD_fake.mean(0) \
    + lambda1 * gradient_penalty(fake_inputs.data, real_inputs.data, netD) \
    + lambda2 * consistency_term(real_inputs, netD)
errD.backward()
optimizerD.step()

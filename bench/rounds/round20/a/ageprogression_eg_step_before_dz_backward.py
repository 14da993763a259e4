# label: hazard raises no-twin
# why: Net.teach steps eg_optimizer (Encoder + Generator weights) right after loss.backward(retain_graph=True), then backpropagates dz_loss_tot, whose graph runs through d_z = self.Dz(z) back into the Encoder whose saved weights were just overwritten in place.
# source: https://github.com/mattans/AgeProgression/issues/23
from collections import OrderedDict

import torch
import torch.nn as nn
from torch.nn.functional import l1_loss
from torch.nn.functional import binary_cross_entropy_with_logits as bce_with_logits_loss
from torch.optim import Adam

torch.manual_seed(0)

NUM_Z_CHANNELS = 8
LABEL_LEN = 4


def two_sided(x):
    return 2 * (x - 0.5)


class Encoder(nn.Module):
    def __init__(self):
        super(Encoder, self).__init__()
        self.conv_layers = nn.ModuleList()
        self.conv_layers.add_module('e_conv_1', nn.Sequential(nn.Conv2d(3, 8, 4, stride=2), nn.ReLU()))
        self.conv_layers.add_module('e_conv_2', nn.Sequential(nn.Conv2d(8, 16, 3, stride=1), nn.ReLU()))
        self.fc_layer = nn.Sequential(OrderedDict([
            ('e_fc_1', nn.Linear(in_features=16, out_features=NUM_Z_CHANNELS)),
            ('tanh_1', nn.Tanh()),
        ]))

    def forward(self, face):
        out = face
        for conv_layer in self.conv_layers:
            out = conv_layer(out)
        out = out.flatten(1, -1)
        return self.fc_layer(out)


class DiscriminatorZ(nn.Module):
    def __init__(self):
        super(DiscriminatorZ, self).__init__()
        self.layers = nn.ModuleList()
        self.layers.add_module('dz_fc_1', nn.Sequential(nn.Linear(NUM_Z_CHANNELS, 8), nn.BatchNorm1d(8), nn.ReLU()))
        self.layers.add_module('dz_fc_2', nn.Sequential(nn.Linear(8, 1)))

    def forward(self, z):
        out = z
        for layer in self.layers:
            out = layer(out)
        return out


class DiscriminatorImg(nn.Module):
    def __init__(self):
        super(DiscriminatorImg, self).__init__()
        self.conv = nn.Sequential(nn.Conv2d(3 + LABEL_LEN, 8, kernel_size=2, stride=2), nn.BatchNorm2d(8), nn.ReLU())
        self.fc = nn.Linear(8 * 3 * 3, 1)

    def forward(self, imgs, labels):
        labels_tensor = labels[:, :, None, None].expand(-1, -1, imgs.size(2), imgs.size(3))
        out = self.conv(torch.cat((imgs, labels_tensor), 1))
        return self.fc(out.flatten(1, -1))


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.fc = nn.Sequential(nn.Linear(NUM_Z_CHANNELS + LABEL_LEN, 16 * 3 * 3), nn.ReLU())
        self.deconv = nn.Sequential(nn.ConvTranspose2d(16, 3, 2, stride=2), nn.Tanh())

    def forward(self, z):
        out = self.fc(z).view(z.size(0), 16, 3, 3)
        return self.deconv(out)


class Net(object):
    def __init__(self):
        self.E = Encoder()
        self.Dz = DiscriminatorZ()
        self.Dimg = DiscriminatorImg()
        self.G = Generator()
        self.eg_optimizer = Adam(list(self.E.parameters()) + list(self.G.parameters()))
        self.dz_optimizer = Adam(self.Dz.parameters())
        self.di_optimizer = Adam(self.Dimg.parameters())

    def teach(self, images, labels):
        z = self.E(images)
        z_l = torch.cat((z, labels), 1)
        generated = self.G(z_l)
        eg_loss = l1_loss(generated, images)
        reg = l1_loss(generated[:, :, :, :-1], generated[:, :, :, 1:]) + l1_loss(generated[:, :, :-1, :], generated[:, :, 1:, :])
        reg_loss = 0 * reg

        # DiscriminatorZ Loss
        z_prior = two_sided(torch.rand_like(z))
        d_z_prior = self.Dz(z_prior)
        d_z = self.Dz(z)
        dz_loss_prior = bce_with_logits_loss(d_z_prior, torch.ones_like(d_z_prior))
        dz_loss = bce_with_logits_loss(d_z, torch.zeros_like(d_z))
        dz_loss_tot = (dz_loss + dz_loss_prior)

        # Encoder\DiscriminatorZ Loss
        ez_loss = 0.0001 * bce_with_logits_loss(d_z, torch.ones_like(d_z))

        # DiscriminatorImg Loss
        d_i_input = self.Dimg(images, labels)
        d_i_output = self.Dimg(generated, labels)
        di_input_loss = bce_with_logits_loss(d_i_input, torch.ones_like(d_i_input))
        di_output_loss = bce_with_logits_loss(d_i_output, torch.zeros_like(d_i_output))
        di_loss_tot = (di_input_loss + di_output_loss)

        # Generator\DiscriminatorImg Loss
        dg_loss = 0.0001 * bce_with_logits_loss(d_i_output, torch.ones_like(d_i_output))

        # Back prop on Encoder\Generator
        self.eg_optimizer.zero_grad()
        loss = eg_loss + reg_loss + ez_loss + dg_loss
        loss.backward(retain_graph=True)
        self.eg_optimizer.step()  # <-- IPL001

        # Back prop on DiscriminatorZ
        self.dz_optimizer.zero_grad()
        dz_loss_tot.backward(retain_graph=True)
        self.dz_optimizer.step()

        # Back prop on DiscriminatorImg
        self.di_optimizer.zero_grad()
        di_loss_tot.backward()
        self.di_optimizer.step()
        return loss.detach(), dz_loss_tot.detach(), di_loss_tot.detach()


def main():
    net = Net()
    images = torch.rand(4, 3, 6, 6) * 2 - 1
    labels = torch.eye(LABEL_LEN)
    return net.teach(images, labels)


losses = main()

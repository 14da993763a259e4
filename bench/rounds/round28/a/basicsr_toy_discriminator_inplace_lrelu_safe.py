# label: safe
# why: the discriminator's LeakyReLU(inplace=True) only rewrites batch-norm outputs, which batch norm does not save, so running D on real and fake images and backpropagating the summed loss once gives the same gradients as two separate backward passes.
# source: https://github.com/XPixelGroup/BasicSR/commit/4c9a4fb951132bb15b2ce95ec34e807b9b7f5b77 (tests/test_discriminator_backward.py)
import copy
import random

import torch
from torch import nn as nn


class ToyDiscriminator(nn.Module):

    def __init__(self):
        super(ToyDiscriminator, self).__init__()
        self.conv0 = nn.Conv2d(3, 4, 3, 1, 1, bias=True)
        self.bn0 = nn.BatchNorm2d(4, affine=True)
        self.conv1 = nn.Conv2d(4, 4, 3, 1, 1, bias=True)
        self.bn1 = nn.BatchNorm2d(4, affine=True)
        self.linear = nn.Linear(4 * 6 * 6, 1)
        self.lrelu = nn.LeakyReLU(negative_slope=0.2, inplace=True)

    def forward(self, x):
        feat = self.lrelu(self.bn0(self.conv0(x)))
        feat = self.lrelu(self.bn1(self.conv1(feat)))
        feat = feat.view(feat.size(0), -1)
        out = torch.sigmoid(self.linear(feat))
        return out


def main():
    manualSeed = 999
    random.seed(manualSeed)
    torch.manual_seed(manualSeed)

    img_real = torch.rand((2, 3, 6, 6))
    img_fake = torch.rand((2, 3, 6, 6))
    net_d_1 = ToyDiscriminator()
    net_d_2 = copy.deepcopy(net_d_1)
    net_d_1.train()
    net_d_2.train()

    criterion = nn.BCELoss()
    real_label = 1
    fake_label = 0

    # (1) Backward D network twice as the official tutorial does
    net_d_1.zero_grad()
    output = net_d_1(img_real).view(-1)
    label = output.new_ones(output.size()) * real_label
    loss_real = criterion(output, label)
    loss_real.backward()
    output = net_d_1(img_fake).view(-1)
    label = output.new_ones(output.size()) * fake_label
    loss_fake = criterion(output, label)
    loss_fake.backward()

    # (2) Backward D network once
    net_d_2.zero_grad()
    output = net_d_2(img_real).view(-1)
    label = output.new_ones(output.size()) * real_label
    loss_real = criterion(output, label)
    output = net_d_2(img_fake).view(-1)
    label = output.new_ones(output.size()) * fake_label
    loss_fake = criterion(output, label)
    loss = loss_real + loss_fake
    loss.backward()

    diffs = torch.stack([torch.sum(torch.abs(k1.grad - k2.grad)) for k1, k2 in zip(net_d_1.parameters(), net_d_2.parameters())])
    return diffs, net_d_2.conv0.weight.grad


diffs, conv0_grad = main()

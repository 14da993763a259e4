# label: hazard raises no-twin
# why: GNet keeps `self.mean_w` as a running average built from `mapping` with its graph attached, so the next iteration's backward walks into the previous iteration's mapping layers, whose nn.Linear weights optimizerG.step() has already overwritten in place.
# source: https://github.com/facebookresearch/pytorch_GAN_zoo/issues/124
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class NormalizationLayer(nn.Module):
    def forward(self, x, epsilon=1e-8):
        return x * (((x ** 2).mean(dim=1, keepdim=True) + epsilon).rsqrt())


class ConstrainedLayer(nn.Module):
    def __init__(self, module, equalized=True, lrMul=1.0, initBiasToZero=True):
        super(ConstrainedLayer, self).__init__()
        self.module = module
        self.equalized = equalized
        if initBiasToZero:
            self.module.bias.data.fill_(0)
        if self.equalized:
            self.module.weight.data.normal_(0, 1)
            self.module.weight.data /= lrMul
            self.weight = math.sqrt(2.0 / module.in_features) * lrMul

    def forward(self, x):
        x = self.module(x)
        if self.equalized:
            x *= self.weight
        return x


class EqualizedLinear(ConstrainedLayer):
    def __init__(self, nChannelsPrevious, nChannels, bias=True, **kwargs):
        ConstrainedLayer.__init__(self, nn.Linear(nChannelsPrevious, nChannels, bias=bias), **kwargs)


class MappingLayer(nn.Module):
    def __init__(self, dimIn, dimLatent, nLayers, leakyReluLeak=0.2):
        super(MappingLayer, self).__init__()
        self.FC = nn.ModuleList()
        inDim = dimIn
        for i in range(nLayers):
            self.FC.append(EqualizedLinear(inDim, dimLatent, lrMul=0.01, equalized=True, initBiasToZero=True))
            inDim = dimLatent
        self.activation = torch.nn.LeakyReLU(leakyReluLeak)

    def forward(self, x):
        for layer in self.FC:
            x = self.activation(layer(x))
        return x


class GNet(nn.Module):
    def __init__(self, dimInput=16, dimMapping=16, dimOutput=3, nMappingLayers=2,
                 phiTruncation=0.5, gamma_avg=0.99):
        super(GNet, self).__init__()
        self.mapping = MappingLayer(dimInput, dimMapping, nMappingLayers)
        self.noramlizationLayer = NormalizationLayer()
        self.phiTruncation = phiTruncation
        self.gamma_avg = gamma_avg
        self.mean_w = None
        self.toRGB = EqualizedLinear(dimMapping, dimOutput * 4 * 4)

    def forward(self, x):
        batchSize = x.size(0)
        mapping = self.mapping(self.noramlizationLayer(x))
        if self.training:
            if self.mean_w is None:
                self.mean_w = mapping.mean(dim=0, keepdim=True)
            self.mean_w = self.gamma_avg * self.mean_w + (1 - self.gamma_avg) * mapping.mean(dim=0, keepdim=True)

        if self.phiTruncation < 1:
            mapping = self.mean_w + self.phiTruncation * (mapping - self.mean_w)

        feature = self.toRGB(mapping)
        return feature.view(batchSize, 3, 4, 4)


def main():
    netG = GNet()
    netD = nn.Sequential(nn.Flatten(), nn.Linear(48, 1))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-3, betas=(0.0, 0.99))
    n_samples = 4
    for step in range(2):
        optimizerG.zero_grad()
        inputNoise = torch.randn(n_samples, 16)
        predFakeG = netG(inputNoise)
        predFakeD = netD(predFakeG)
        lossGFake = -predFakeD.mean()
        lossGFake.backward(retain_graph=True)
        optimizerG.step()  # <-- IPL001


main()

# label: safe
# why: the in-place updates (noise added to the data, dlogdet *= -1, objective += likelihood) all hit tensors no backward node saved
# source: https://github.com/y0ast/Glow-PyTorch/issues/9 (model.py normal_flow / modules.py ActNorm2d)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def uniform_binning_correction(x, n_bits=8):
    b, c, h, w = x.size()
    n_bins = 2 ** n_bits
    chw = c * h * w
    x += torch.zeros_like(x).uniform_(0, 1.0 / n_bins)
    objective = -math.log(n_bins) * chw * torch.ones(b, device=x.device)
    return x, objective


def gaussian_likelihood(mean, logs, x):
    p = -0.5 * (math.log(2 * math.pi) + 2.0 * logs + ((x - mean) ** 2) / torch.exp(2.0 * logs))
    return torch.sum(p, dim=[1, 2, 3])


class ActNorm2d(nn.Module):
    def __init__(self, num_features, scale=1.0):
        super().__init__()
        size = [1, num_features, 1, 1]
        self.bias = nn.Parameter(0.1 * torch.randn(*size))
        self.logs = nn.Parameter(0.1 * torch.randn(*size))
        self.scale = scale

    def forward(self, input, logdet=None, reverse=False):
        input = input + self.bias
        input = input * torch.exp(self.logs)
        if logdet is not None:
            b, c, h, w = input.shape
            dlogdet = torch.sum(self.logs) * h * w
            if reverse:
                dlogdet *= -1
            logdet = logdet + dlogdet
        return input, logdet


class AffineCoupling(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(c // 2, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, c, 3, padding=1))

    def forward(self, z, logdet):
        z1, z2 = z.chunk(2, 1)
        h = self.net(z1)
        shift, scale = h[:, 0::2], h[:, 1::2]
        scale = torch.sigmoid(scale + 2.0)
        z2 = z2 + shift
        z2 = z2 * scale
        logdet = torch.sum(torch.log(scale), dim=[1, 2, 3]) + logdet
        return torch.cat((z1, z2), dim=1), logdet


class Glow(nn.Module):
    def __init__(self, c=4, K=2):
        super().__init__()
        self.layers = nn.ModuleList()
        for _ in range(K):
            self.layers.append(ActNorm2d(c))
            self.layers.append(AffineCoupling(c))
        self.prior_logs = nn.Parameter(torch.zeros(1, c, 1, 1))

    def flow(self, z, logdet):
        for layer in self.layers:
            z, logdet = layer(z, logdet)
        return z, logdet

    def normal_flow(self, x):
        b, c, h, w = x.shape
        x, logdet = uniform_binning_correction(x)
        z, objective = self.flow(x, logdet=logdet)
        mean, logs = torch.zeros_like(z), self.prior_logs.expand_as(z)
        objective += gaussian_likelihood(mean, logs, z)
        bpd = (-objective) / (math.log(2.0) * c * h * w)
        return z, bpd


model = Glow()
batch = {"image": torch.rand(3, 4, 4, 4) - 0.5}
z, bpd = model.normal_flow(batch.pop("image"))
z_rev, logdet_rev = model.layers[0](z.detach(), logdet=torch.zeros(3), reverse=True)
loss = bpd.mean() + logdet_rev.mean()
loss.backward()

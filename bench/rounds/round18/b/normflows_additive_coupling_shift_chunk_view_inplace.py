# label: hazard raises
# why: with scale=False the AffineCoupling adds the shift with z2 += param, but z2 is one of the views returned by Split's chunk, and autograd forbids in-place writes to outputs of multi-view functions
# source: https://github.com/VincentStimper/normalizing-flows/commit/b4cbac53370b36c915216522e286d6d8c3f1d12e
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)


class Flow(nn.Module):
    def forward(self, z):
        raise NotImplementedError

    def inverse(self, z):
        raise NotImplementedError


class Split(Flow):
    def __init__(self, mode="channel"):
        super().__init__()
        self.mode = mode

    def forward(self, z):
        if self.mode == "channel":
            z1, z2 = z.chunk(2, dim=1)
        else:
            raise NotImplementedError("Mode " + self.mode + " is not implemented.")
        log_det = 0
        return [z1, z2], log_det


class Merge(Split):
    def forward(self, z):
        z1, z2 = z
        return torch.cat([z1, z2], 1), 0


class MLP(nn.Module):
    def __init__(self, layers, leaky=0.0):
        super().__init__()
        net = nn.ModuleList([])
        for k in range(len(layers) - 2):
            net.append(nn.Linear(layers[k], layers[k + 1]))
            net.append(nn.LeakyReLU(leaky))
        net.append(nn.Linear(layers[-2], layers[-1]))
        self.net = nn.Sequential(*net)

    def forward(self, x):
        return self.net(x)


class AffineCoupling(Flow):
    def __init__(self, param_map, scale=True, scale_map="exp"):
        super().__init__()
        self.add_module("param_map", param_map)
        self.scale = scale
        self.scale_map = scale_map

    def forward(self, z):
        z1, z2 = z
        param = self.param_map(z1)
        if self.scale:
            shift = param[:, 0::2, ...]
            scale_ = param[:, 1::2, ...]
            z2 = z2 * torch.exp(scale_) + shift
            log_det = torch.sum(scale_, dim=list(range(1, shift.dim())))
        else:
            z2 += param  # <-- IPL001: z2 is a chunk() view of the flow input
            log_det = 0
        return [z1, z2], log_det


class AffineCouplingBlock(Flow):
    def __init__(self, param_map, scale=True, scale_map="exp", split_mode="channel"):
        super().__init__()
        self.flows = nn.ModuleList([])
        self.flows += [Split(split_mode)]
        self.flows += [AffineCoupling(param_map, scale, scale_map)]
        self.flows += [Merge(split_mode)]

    def forward(self, z):
        log_det_tot = torch.zeros(z.shape[0], dtype=z.dtype, device=z.device)
        for flow in self.flows:
            z, log_det = flow(z)
            log_det_tot += log_det
        return z, log_det_tot


class Permute(Flow):
    def __init__(self, num_channels):
        super().__init__()
        self.register_buffer("perm", torch.flip(torch.arange(num_channels), (0,)))

    def forward(self, z):
        return z[:, self.perm], 0


class DiagGaussian(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.d = d
        self.loc = nn.Parameter(torch.zeros(1, d))
        self.log_scale = nn.Parameter(torch.zeros(1, d))

    def log_prob(self, z):
        log_p = -0.5 * self.d * np.log(2 * np.pi) - torch.sum(
            self.log_scale + 0.5 * torch.pow((z - self.loc) / torch.exp(self.log_scale), 2), 1)
        return log_p


class NormalizingFlow(nn.Module):
    def __init__(self, q0, flows):
        super().__init__()
        self.q0 = q0
        self.flows = nn.ModuleList(flows)

    def forward_kld(self, x):
        log_q = torch.zeros(len(x), device=x.device)
        z = x
        for i in range(len(self.flows) - 1, -1, -1):
            z, log_det = self.flows[i](z)
            log_q = log_q + log_det
        log_q = log_q + self.q0.log_prob(z)
        return -torch.mean(log_q)


latent_size = 4
flows = []
for i in range(2):
    param_map = MLP([latent_size // 2, 16, latent_size // 2])
    flows += [AffineCouplingBlock(param_map, scale=False)]
    flows += [Permute(latent_size)]
model = NormalizingFlow(DiagGaussian(latent_size), flows)
x = torch.randn(8, latent_size)
loss = model.forward_kld(x)
loss.backward()

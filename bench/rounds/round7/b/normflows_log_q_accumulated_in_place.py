# label: safe
# why: NormalizingFlow accumulates log-determinants with log_q += log_det / log_q -= log_det into a tensor it owns (zeros or the base log-prob); additions save nothing and no other name aliases log_q.
# source: https://github.com/VincentStimper/normalizing-flows/blob/bf462497518194e50ca18e030eb2767e993887c7/normflows/core.py
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class DiagGaussian(nn.Module):
    def __init__(self, shape, trainable=True):
        super().__init__()
        self.shape = (shape,)
        self.n_dim = 1
        self.d = shape
        self.loc = nn.Parameter(torch.zeros(1, *self.shape)) if trainable else torch.zeros(1, *self.shape)
        self.log_scale = nn.Parameter(torch.zeros(1, *self.shape)) if trainable else torch.zeros(1, *self.shape)

    def forward(self, num_samples=1):
        eps = torch.randn((num_samples,) + self.shape, dtype=self.loc.dtype, device=self.loc.device)
        z = self.loc + torch.exp(self.log_scale) * eps
        log_p = -0.5 * self.d * np.log(2 * np.pi) - torch.sum(self.log_scale + 0.5 * torch.pow(eps, 2),
                                                                list(range(1, self.n_dim + 1)))
        return z, log_p

    def log_prob(self, z):
        log_p = -0.5 * self.d * np.log(2 * np.pi) - torch.sum(
            self.log_scale + 0.5 * torch.pow((z - self.loc) / torch.exp(self.log_scale), 2),
            list(range(1, self.n_dim + 1)))
        return log_p


class AffineCoupling(nn.Module):
    def __init__(self, dim, hidden=8, flip=False):
        super().__init__()
        self.flip = flip
        self.param_map = nn.Sequential(nn.Linear(dim // 2, hidden), nn.ReLU(), nn.Linear(hidden, dim))

    def _split(self, z):
        z1, z2 = z.chunk(2, dim=1)
        return (z2, z1) if self.flip else (z1, z2)

    def _merge(self, z1, z2):
        return torch.cat([z2, z1] if self.flip else [z1, z2], dim=1)

    def forward(self, z):
        z1, z2 = self._split(z)
        shift, scale = self.param_map(z1).chunk(2, dim=1)
        scale = torch.tanh(scale)
        z2 = z2 * torch.exp(scale) + shift
        return self._merge(z1, z2), torch.sum(scale, dim=1)

    def inverse(self, z):
        z1, z2 = self._split(z)
        shift, scale = self.param_map(z1).chunk(2, dim=1)
        scale = torch.tanh(scale)
        z2 = (z2 - shift) * torch.exp(-scale)
        return self._merge(z1, z2), -torch.sum(scale, dim=1)


class NormalizingFlow(nn.Module):
    def __init__(self, q0, flows, p=None):
        super().__init__()
        self.q0 = q0
        self.flows = nn.ModuleList(flows)
        self.p = p

    def forward_kld(self, x):
        log_q = torch.zeros(len(x), device=x.device)
        z = x
        for i in range(len(self.flows) - 1, -1, -1):
            z, log_det = self.flows[i].inverse(z)
            log_q += log_det
        log_q += self.q0.log_prob(z)
        return -torch.mean(log_q)

    def reverse_kld(self, num_samples=1, beta=1.0):
        z, log_q_ = self.q0(num_samples)
        log_q = torch.zeros_like(log_q_)
        log_q += log_q_
        for flow in self.flows:
            z, log_det = flow(z)
            log_q -= log_det
        log_p = self.p.log_prob(z)
        return torch.mean(log_q) - beta * torch.mean(log_p)


target = torch.distributions.MultivariateNormal(torch.tensor([1.0, -1.0, 0.5, 0.0]), torch.eye(4) * 0.5)
model = NormalizingFlow(DiagGaussian(4), [AffineCoupling(4, flip=bool(i % 2)) for i in range(4)], p=target)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for it in range(3):
    optimizer.zero_grad()
    x = target.sample((16,))
    loss = model.forward_kld(x) + 0.1 * model.reverse_kld(num_samples=16)
    loss.backward()
    optimizer.step()
final_loss = loss.detach()

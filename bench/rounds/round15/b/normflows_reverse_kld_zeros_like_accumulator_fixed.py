# label: safe
# why: fixed reverse_kld: log_q is a fresh zeros_like buffer that the base log-probability is added into, so the in-place `+=`/`-=` touch no tensor saved for backward.
# source: https://github.com/VincentStimper/normalizing-flows/commit/45e0d38b45ffd869dfd3c4c28e67e26ff231b934
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)


class GaussianMixture(nn.Module):
    """Mixture of Gaussians with diagonal covariance matrix"""

    def __init__(self, n_modes, dim):
        super().__init__()
        self.n_modes = n_modes
        self.dim = dim
        loc = np.random.randn(self.n_modes, self.dim)[None, ...]
        scale = np.ones((self.n_modes, self.dim))[None, ...]
        weights = np.ones(self.n_modes)[None, ...]
        weights /= weights.sum(1)
        self.loc = nn.Parameter(torch.tensor(1. * loc))
        self.log_scale = nn.Parameter(torch.tensor(np.log(1. * scale)))
        self.weight_scores = nn.Parameter(torch.tensor(np.log(1. * weights)))

    def forward(self, num_samples=1):
        weights = torch.softmax(self.weight_scores, 1)
        mode = torch.multinomial(weights[0, :], num_samples, replacement=True)
        mode_1h = nn.functional.one_hot(mode, self.n_modes)
        mode_1h = mode_1h[..., None]
        eps_ = torch.randn(num_samples, self.dim, dtype=self.loc.dtype)
        scale_sample = torch.sum(torch.exp(self.log_scale) * mode_1h, 1)
        loc_sample = torch.sum(self.loc * mode_1h, 1)
        z = eps_ * scale_sample + loc_sample
        eps = (z[:, None, :] - self.loc) / torch.exp(self.log_scale)
        log_p = - 0.5 * self.dim * np.log(2 * np.pi) + torch.log(weights) \
                - 0.5 * torch.sum(torch.pow(eps, 2), 2) \
                - torch.sum(self.log_scale, 2)
        log_p = torch.logsumexp(log_p, 1)
        return z, log_p


class Planar(nn.Module):
    def __init__(self, shape):
        super().__init__()
        lim_w = np.sqrt(2. / np.prod(shape))
        lim_u = np.sqrt(2)
        self.u = nn.Parameter(torch.empty(shape, dtype=torch.double)[None])
        nn.init.uniform_(self.u, -lim_u, lim_u)
        self.w = nn.Parameter(torch.empty(shape, dtype=torch.double)[None])
        nn.init.uniform_(self.w, -lim_w, lim_w)
        self.b = nn.Parameter(torch.zeros(1, dtype=torch.double))
        self.h = torch.tanh

    def forward(self, z):
        lin = torch.sum(self.w * z, list(range(1, self.w.dim()))) + self.b
        inner = torch.sum(self.w * self.u)
        u = self.u + (torch.log(1 + torch.exp(inner)) - 1 - inner) * self.w / torch.sum(self.w ** 2)
        h_ = lambda x: 1 / torch.cosh(x) ** 2
        z_ = z + u * self.h(lin.unsqueeze(1))
        log_det = torch.log(torch.abs(1 + torch.sum(self.w * u) * h_(lin)))
        return z_, log_det


class TwoModes(nn.Module):
    def log_prob(self, z):
        a = torch.abs(z[:, 0])
        return - 0.5 * ((torch.norm(z, dim=1) - 2) / 0.2) ** 2 \
               - 0.5 * ((a - 2) / 0.3) ** 2 + torch.log(1 + torch.exp(-4 * a / 0.09))


class NormalizingFlow(nn.Module):
    def __init__(self, q0, flows, p=None):
        super().__init__()
        self.q0 = q0
        self.flows = nn.ModuleList(flows)
        self.p = p

    def reverse_kld(self, num_samples=1, beta=1.):
        z, log_q_ = self.q0(num_samples)
        log_q = torch.zeros_like(log_q_)
        log_q += log_q_
        for flow in self.flows:
            z, log_det = flow(z)
            log_q -= log_det
        log_p = self.p.log_prob(z)
        return torch.mean(log_q) - beta * torch.mean(log_p)


model = NormalizingFlow(GaussianMixture(3, 2), [Planar((2,)) for _ in range(4)], TwoModes())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
optimizer.zero_grad()
loss = model.reverse_kld(num_samples=16)
loss.backward()
optimizer.step()

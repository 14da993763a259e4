# label: safe
# why: the power iteration still updates _u/_v in place, but forward clones them before computing sigma, so the next forward's in-place update never touches a tensor saved for backward.
# source: https://github.com/pytorch/pytorch/pull/13350 (fix: clone u and v before using them, as in torch/nn/utils/parametrizations.py)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrize

torch.manual_seed(0)


class _SpectralNorm(nn.Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        self.dim = dim
        self.eps = eps
        self.n_power_iterations = n_power_iterations
        weight_mat = self._reshape_weight_to_matrix(weight)
        h, w = weight_mat.size()
        u = weight_mat.new_empty(h).normal_(0, 1)
        v = weight_mat.new_empty(w).normal_(0, 1)
        self.register_buffer('_u', F.normalize(u, dim=0, eps=self.eps))
        self.register_buffer('_v', F.normalize(v, dim=0, eps=self.eps))
        self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    @torch.no_grad()
    def _power_method(self, weight_mat, n_power_iterations):
        for _ in range(n_power_iterations):
            self._u = F.normalize(torch.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
            self._v = F.normalize(torch.mv(weight_mat.t(), self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # clone so the next forward's in-place power iteration does not modify tensors saved for backward
        u = self._u.clone(memory_format=torch.contiguous_format)
        v = self._v.clone(memory_format=torch.contiguous_format)
        sigma = torch.dot(u, torch.mv(weight_mat, v))
        return weight / sigma


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12):
    weight = getattr(module, name)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, 0, eps))
    return module


def run_with_spectral(spectral):
    discriminator = spectral(nn.Linear(10, 1))
    optim = torch.optim.Adam(discriminator.parameters())
    loss = nn.L1Loss()

    X = torch.ones(4, 10)
    real = torch.ones(4, 1)
    fake = torch.zeros(4, 1)

    optim.zero_grad()
    generated = torch.rand(4, 10)

    loss_real = loss(discriminator(X), real)
    loss_fake = loss(discriminator(generated), fake)

    l = loss_real + loss_fake
    l.backward()
    grad = discriminator.parametrizations.weight.original.grad.clone()
    optim.step()
    return l.detach(), grad


total_loss, weight_grad = run_with_spectral(spectral_norm)

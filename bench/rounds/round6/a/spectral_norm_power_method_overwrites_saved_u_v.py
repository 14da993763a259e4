# label: hazard raises
# why: _power_method normalizes u and v with out= into the buffers, but the buffers are the very clones the previous forward passed to torch.vdot (saved for backward), so D(real) followed by D(fake) overwrites what the first forward's backward needs
# source: https://github.com/pytorch/pytorch/pull/62293 (torch/nn/utils/parametrizations.py _SpectralNorm before "Do not modify saved variables in-place for spectral norm during power iteration")
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize

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

    @torch.autograd.no_grad()
    def _power_method(self, weight_mat, n_power_iterations):
        for _ in range(n_power_iterations):
            # Spectral norm of weight equals to `u^T W v`, where `u` and `v`
            # are the first left and right singular vectors.
            self._u = F.normalize(torch.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)  # <-- IPL001: overwrites the u the previous forward saved in vdot
            self._v = F.normalize(torch.mv(weight_mat.t(), self._u), dim=0, eps=self.eps, out=self._v)  # <-- IPL001: overwrites the v the previous forward saved in mv
        # See above on why we need to clone
        self._u = self._u.clone(memory_format=torch.contiguous_format)
        self._v = self._v.clone(memory_format=torch.contiguous_format)

    def forward(self, weight):
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        sigma = torch.vdot(self._u, torch.mv(weight_mat, self._v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    weight = getattr(module, name)
    if dim is None:
        dim = 1 if isinstance(module, nn.ConvTranspose2d) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


netD = nn.Sequential(
    spectral_norm(nn.Linear(6, 16)),
    nn.LeakyReLU(0.1),
    spectral_norm(nn.Linear(16, 1)),
)
netG = nn.Linear(4, 6)
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.0, 0.9))

real = torch.randn(8, 6)
z = torch.randn(8, 4)
fake = netG(z).detach()

# loss = D(real) - D(fake): two forwards through the same parametrized weights before one backward
optD.zero_grad()
d_loss = F.relu(1.0 - netD(real)).mean() + F.relu(1.0 + netD(fake)).mean()
d_loss.backward()
optD.step()

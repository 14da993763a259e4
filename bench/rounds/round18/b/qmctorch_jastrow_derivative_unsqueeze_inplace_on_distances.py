# label: hazard raises
# why: the Jastrow derivative reshapes the electron-distance matrix r with r.unsqueeze_(1) / r.squeeze_(), bumping the version of a tensor that weight * r in the Jastrow kernel already saved for backward
# source: https://github.com/NLESC-JCER/QMCTorch/commit/b4f7ced07ec516796ca8293d9bed0d8e863ad6ed
import torch
from torch import nn

torch.manual_seed(0)


class ElectronDistance(nn.Module):
    def __init__(self, nelec, ndim):
        super(ElectronDistance, self).__init__()
        self.nelec = nelec
        self.ndim = ndim

    def forward(self, input, derivative=0):
        input = input.view(-1, self.nelec, self.ndim)
        norm = (input ** 2).sum(-1).unsqueeze(-1)
        dist = (norm + norm.transpose(1, 2) - 2.0 * torch.bmm(input, input.transpose(1, 2)) + 1E-6) ** (0.5)
        if derivative == 0:
            return dist
        elif derivative == 1:
            invr = (1. / (dist + 1E-16)).unsqueeze(1)
            diff_axis = input.transpose(1, 2).unsqueeze(3)
            diff_axis = diff_axis - diff_axis.transpose(2, 3)
            return diff_axis * invr


class TwoBodyJastrowFactor(nn.Module):
    def __init__(self, nup, ndown):
        super(TwoBodyJastrowFactor, self).__init__()
        self.nup = nup
        self.ndown = ndown
        self.nelec = nup + ndown
        self.ndim = 3
        self.weight = nn.Parameter(torch.tensor([2.5]))
        bup = torch.cat((0.25 * torch.ones(nup, nup), 0.5 * torch.ones(nup, ndown)), dim=1)
        bdown = torch.cat((0.5 * torch.ones(ndown, nup), 0.25 * torch.ones(ndown, ndown)), dim=1)
        self.static_weight = torch.cat((bup, bdown), dim=0)
        self.edist = ElectronDistance(self.nelec, self.ndim)

    def forward(self, pos, derivative=0):
        r = self.edist(pos)
        jast = self._get_jastrow_elements(r)
        if derivative == 0:
            return jast.prod(-1).prod(-1)
        elif derivative == 1:
            dr = self.edist(pos, derivative=1)
            return self._jastrow_derivative(r, dr, jast)

    def _jastrow_derivative(self, r, dr, jast):
        djast = self._get_der_jastrow_elements(r, dr) * jast.unsqueeze(1)
        return djast.sum(-1)

    def _get_jastrow_elements(self, r):
        return torch.exp(self._compute_kernel(r))

    def _compute_kernel(self, r):
        return self.static_weight * r / (1.0 + self.weight * r)

    def _get_der_jastrow_elements(self, r, dr):
        r = r.unsqueeze_(1)  # <-- IPL001, IPL004: r was saved by weight * r in _compute_kernel
        denom = 1. / (1.0 + self.weight * r)
        a = self.static_weight * dr * denom
        b = - self.static_weight * self.weight * r * dr * denom ** 2
        r.squeeze_()  # <-- IPL001, IPL004: second in-place reshape of the caller's distance matrix
        return a + b


jastrow = TwoBodyJastrowFactor(nup=2, ndown=1)
pos = torch.randn(4, 9, requires_grad=True)
jval = jastrow(pos)
grad_jast = jastrow(pos, derivative=1)
local_energy = -0.5 * (grad_jast ** 2).sum() / jval.sum()
local_energy.backward()

# label: hazard raises
# why: x = x.prod(-1) is scaled with x *= weight in place, but prod saved its output for backward, so the energy gradient w.r.t. the Jastrow weight fails
# source: https://github.com/NLESC-JCER/QMCTorch/issues/30 (fixed in PR #33, commit 0a62bf5a06ae445b93dd821b1c5b19c45038d11e)
import torch
from torch import nn

torch.manual_seed(0)


class ElectronDistance(nn.Module):
    def __init__(self, nelec, ndim=3):
        super().__init__()
        self.nelec = nelec
        self.ndim = ndim

    def forward(self, input, derivative=0):
        nbatch = input.shape[0]
        pos = input.view(nbatch, self.nelec, self.ndim)
        diff = pos.unsqueeze(2) - pos.unsqueeze(1)              # nbatch, n, n, 3
        eye = torch.eye(self.nelec).unsqueeze(0)
        dist = torch.sqrt((diff ** 2).sum(-1) + eye)            # eye avoids sqrt(0) on the diagonal
        if derivative == 0:
            return dist
        dr = (diff / dist.unsqueeze(-1)).permute(0, 3, 1, 2)    # nbatch, 3, n, n
        if derivative == 1:
            return dr
        return (1. - dr ** 2) / dist.unsqueeze(1)


class TwoBodyJastrowFactor(nn.Module):

    def __init__(self, nup, ndown, w=1.):
        super(TwoBodyJastrowFactor, self).__init__()
        self.nup = nup
        self.ndown = ndown
        self.nelec = nup + ndown
        self.ndim = 3
        self.device = torch.device('cpu')
        self.weight = nn.Parameter(torch.tensor([w]))
        self.mask_tri_up, self.index_col, self.index_row = self.get_mask_tri_up()
        self.edist = ElectronDistance(self.nelec, self.ndim)
        self.static_weight = self.get_static_weight()
        self._get_index_partial_derivative()

    def get_mask_tri_up(self):
        mask = torch.zeros(self.nelec, self.nelec).type(torch.bool)
        index_col, index_row = [], []
        for i in range(self.nelec - 1):
            for j in range(i + 1, self.nelec):
                index_row.append(i)
                index_col.append(j)
                mask[i, j] = True
        return mask, torch.LongTensor(index_col), torch.LongTensor(index_row)

    def extract_tri_up(self, input):
        nbatch = input.shape[0]
        return input.masked_select(self.mask_tri_up).view(nbatch, -1)

    def get_static_weight(self):
        bup = torch.cat((0.25 * torch.ones(self.nup, self.nup), 0.5 *
                         torch.ones(self.nup, self.ndown)), dim=1)
        bdown = torch.cat((0.5 * torch.ones(self.ndown, self.nup), 0.25 *
                           torch.ones(self.ndown, self.ndown)), dim=1)
        static_weight = torch.cat((bup, bdown), dim=0)
        return static_weight.masked_select(self.mask_tri_up)

    def forward(self, pos, derivative=0):
        nbatch = pos.shape[0]
        r = self.extract_tri_up(self.edist(pos))
        jast = torch.exp(self.static_weight * r / (1.0 + self.weight * r))
        if derivative == 0:
            return jast.prod(1).view(nbatch, 1)
        dr = self.extract_tri_up(self.edist(pos, derivative=1)).view(nbatch, 3, -1)
        d2r = self.extract_tri_up(self.edist(pos, derivative=2)).view(nbatch, 3, -1)
        return self._jastrow_second_derivative(r, dr, d2r, jast)

    def _jastrow_second_derivative(self, r, dr, d2r, jast):
        nbatch = r.shape[0]

        # pure second derivative terms
        prod_val = jast.prod(1).unsqueeze(-1)

        d2jast = self._get_second_der_jastrow_elements(r, dr, d2r).sum(1)

        # might cause problems with backward cause in place operation
        hess_jast = torch.zeros(nbatch, self.nelec)
        hess_jast.index_add_(1, self.index_row, d2jast)
        hess_jast.index_add_(1, self.index_col, d2jast)
        hess_jast *= 0.5

        # mixed terms
        djast = (self._get_der_jastrow_elements(r, dr))

        hess_jast += self._partial_derivative(
            djast, out_mat=hess_jast)
        return hess_jast * prod_val

    def _get_der_jastrow_elements(self, r, dr):
        r_ = r.unsqueeze(1)
        denom = 1. / (1.0 + self.weight * r_)
        a = self.static_weight * dr * denom
        b = - self.static_weight * self.weight * r_ * dr * denom**2
        return (a + b)

    def _get_second_der_jastrow_elements(self, r, dr, d2r):
        r_ = r.unsqueeze(1)
        denom = 1. / (1.0 + self.weight * r_)
        denom2 = denom**2
        dr_square = dr**2
        a = self.static_weight * d2r * denom
        b = -2 * self.static_weight * self.weight * dr_square * denom2
        c = - self.static_weight * self.weight * r_ * d2r * denom2
        d = 2 * self.static_weight * self.weight**2 * r_ * dr_square * denom**3
        e = self._get_der_jastrow_elements(r, dr)
        return a + b + c + d + e**2

    def _get_index_partial_derivative(self):
        self.index_partial_der = []
        self.weight_partial_der = []
        self.index_partial_der_to_elec = []
        for idx in range(self.nelec):
            index_pairs = [(idx, j, 1.) for j in range(
                idx + 1, self.nelec)] + [(j, idx, -1.) for j in range(0, idx)]
            for p1 in range(len(index_pairs) - 1):
                i1, j1, w1 = index_pairs[p1]
                for p2 in range(p1 + 1, len(index_pairs)):
                    i2, j2, w2 = index_pairs[p2]
                    idx1 = self._single_index(i1, j1)
                    idx2 = self._single_index(i2, j2)
                    self.index_partial_der.append([idx1, idx2])
                    self.weight_partial_der.append(w1 * w2)
                    self.index_partial_der_to_elec.append(idx)
        self.weight_partial_der = torch.tensor(self.weight_partial_der)
        self.index_partial_der_to_elec = torch.LongTensor(self.index_partial_der_to_elec)

    def _single_index(self, i, j):
        n = self.nelec
        return int((n * (n - 1) / 2) - (n - i) * ((n - i) - 1) / 2 + j - i - 1)

    def _partial_derivative(self, djast, out_mat=None):
        nbatch = djast.shape[0]
        if out_mat is None:
            out_mat = torch.zeros(nbatch, self.nelec)
        if len(self.index_partial_der) > 0:
            x = djast[..., self.index_partial_der]
            x = x.prod(-1)
            x *= self.weight_partial_der  # <-- IPL001: x is the output of prod(), which prod saved for its backward
            x = x.sum(1)
            out_mat.index_add_(1, self.index_partial_der_to_elec, x)  # <-- IPL004: out_mat is the caller's hess_jast, which it adds to the returned alias afterwards
        return out_mat


jastrow = TwoBodyJastrowFactor(2, 2, w=0.8)
pos = torch.randn(5, 12)
hess = jastrow(pos, derivative=2)
kinetic = -0.5 * hess.sum(1)
loss = kinetic.mean()
loss.backward()
weight_grad = jastrow.weight.grad

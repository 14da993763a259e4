# label: hazard raises no-twin
# why: thomas_solve writes each solved block back into v[i] in place, but torch.bmm(B[i - 1], v[i - 1]) saved the previous block, a view of the same v, so backpropagating through the batched time-chunked solve fails.
# source: https://github.com/Argonne-National-Laboratory/pyoptmat/pull/26
import torch

torch.manual_seed(0)


class LUFactorization(torch.nn.Module):
    def __init__(self, A, B):
        super().__init__()
        self.A = A
        self.B = B
        self.nblk = A.shape[0]
        self.sbat = A.shape[1]
        self.sblk = A.shape[2]
        self._setup_factorization()

    def _setup_factorization(self):
        self.lu, self.pivots, _ = torch.linalg.lu_factor_ex(self.A)


def thomas_solve(lu, pivots, B, v):
    """Simple function implementing a Thomas solve

    Solves in place of v
    """
    i = 0
    v[i] = torch.linalg.lu_solve(lu[i], pivots[i], v[i])
    for i in range(1, lu.shape[0]):
        v[i] = torch.linalg.lu_solve(lu[i], pivots[i], v[i] - torch.bmm(B[i - 1], v[i - 1]))  # <-- IPL001

    return v


class BidiagonalThomasFactorization(LUFactorization):
    def forward(self, v):
        v = v.reshape((self.sbat, self.nblk, self.sblk)).transpose(0, 1).unsqueeze(-1)
        v = thomas_solve(self.lu, self.pivots, self.B, v)
        return v.squeeze(-1).transpose(0, 1).flatten(start_dim=1)


def main():
    nblk, sbat, sblk = 4, 3, 2
    A = torch.eye(sblk).expand(nblk, sbat, sblk, sblk) * 2.0 + 0.1 * torch.randn(nblk, sbat, sblk, sblk)
    params = torch.randn(sblk * nblk, requires_grad=True)
    # the off-diagonal Jacobian blocks depend on the material parameters
    B = -0.5 * torch.sigmoid(params[:sblk]).diag_embed().expand(nblk - 1, sbat, sblk, sblk) + 0.1 * torch.randn(nblk - 1, sbat, sblk, sblk)
    solver = BidiagonalThomasFactorization(A, B)
    rhs = torch.tanh(params).repeat(sbat, 1) * torch.linspace(0.5, 1.5, sbat)[:, None]
    x = solver(rhs)
    loss = x.pow(2).sum()
    loss.backward()
    return x.detach(), params.grad


solution, params_grad = main()

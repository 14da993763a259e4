# label: hazard raises
# why: the LOVE cache update jitters the near-zero diagonal of R through the diagonal view Rdiag, but R is an output that QR saved for backward, so backprop through the fantasy model fails
# source: https://github.com/cornellius-gp/gpytorch/pull/857 (commit b003438a4755bd2e21e0b67fd0214db16761f769)
import torch

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


class RBF(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = torch.nn.Parameter(torch.tensor(0.3))

    @property
    def lengthscale(self):
        return torch.nn.functional.softplus(self.raw_lengthscale)

    def forward(self, x1, x2):
        d = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).pow(2).sum(-1)
        return torch.exp(-0.5 * d / self.lengthscale.pow(2))


def fantasy_covar_cache(L, L_inverse, fant_train_covar, fant_fant_covar):
    """Reduced from DefaultPredictionStrategy.get_fantasy_strategy: update the LOVE root cache."""
    batch_shape = fant_train_covar.shape[:-2]
    m, n = L.shape[-2:]

    lower_left = fant_train_covar.matmul(L_inverse)
    schur_root = torch.linalg.cholesky(fant_fant_covar - lower_left.matmul(lower_left.transpose(-2, -1)))

    # Form new root Z = [L 0; lower_left schur_root]
    num_fant = schur_root.size(-2)
    new_root = torch.zeros(*batch_shape, m + num_fant, n + num_fant, device=L.device, dtype=L.dtype)
    new_root[..., :m, :n] = L
    new_root[..., m:, :n] = lower_left
    new_root[..., m:, n:] = schur_root

    # Use pseudo-inverse of Z as new inv root
    Q, R = torch.linalg.qr(new_root)
    Rdiag = torch.diagonal(R, dim1=-2, dim2=-1)
    # if R is almost singular, add jitter (Rdiag is a view, so this works)
    zeroish = Rdiag.abs() < 1e-6
    if torch.any(zeroish):
        Rdiag[zeroish] = 1e-6  # <-- IPL001: Rdiag is a view of R, which torch.linalg.qr saved for its backward
    new_covar_cache = torch.linalg.solve_triangular(R, Q.transpose(-2, -1), upper=True).transpose(-2, -1)
    return new_covar_cache


kernel = RBF()
train_x = torch.linspace(0, 1, 5).unsqueeze(-1)
fant_x = torch.tensor([[0.35], [0.8]])

train_train = kernel(train_x, train_x) + 1e-2 * torch.eye(5)
L_full = torch.linalg.cholesky(train_train)
L_inverse = torch.linalg.inv(L_full).transpose(-2, -1)
# the stored low-rank root carries a (numerically) dead last column
L = torch.cat([L_full[:, :-1], 1e-7 * L_full[:, -1:]], dim=-1)
fant_train_covar = kernel(fant_x, train_x)
fant_fant_covar = kernel(fant_x, fant_x) + 1e-2 * torch.eye(2)

new_covar_cache = fantasy_covar_cache(L, L_inverse, fant_train_covar, fant_fant_covar)
test_covar = kernel(torch.tensor([[0.5]]), torch.cat([train_x, fant_x]))
loss = (test_covar @ new_covar_cache).pow(2).sum()
loss.backward()
lengthscale_grad = kernel.raw_lengthscale.grad

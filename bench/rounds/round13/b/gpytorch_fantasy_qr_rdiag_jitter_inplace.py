# label: hazard raises
# why: jitter is written into the diagonal view of R returned by torch.qr, which QR's backward saved, so back-propagating through the fantasy model's covariance cache fails
# source: https://github.com/cornellius-gp/gpytorch/commit/b003438a4755bd2e21e0b67fd0214db16761f769
import torch

torch.manual_seed(0)


def rbf_covar(x1, x2, lengthscale):
    return torch.exp(-0.5 * torch.cdist(x1 / lengthscale, x2 / lengthscale).pow(2))


class DefaultPredictionStrategy(object):
    def __init__(self, train_inputs, lengthscale, covar_root, covar_cache):
        self.train_inputs = train_inputs
        self.lengthscale = lengthscale
        self.root = covar_root          # low-rank root L of the train covariance (Lanczos)
        self.covar_cache = covar_cache  # L^{-1} approximation (LOVE cache)

    def get_fantasy_covar_cache(self, fantasy_inputs):
        fant_train_covar = rbf_covar(fantasy_inputs, self.train_inputs, self.lengthscale)
        fant_fant_covar = rbf_covar(fantasy_inputs, fantasy_inputs, self.lengthscale)
        fant_fant_covar = fant_fant_covar + 1e-2 * torch.eye(fantasy_inputs.size(0))

        L_inverse = self.covar_cache
        L = self.root
        lower_left = fant_train_covar.matmul(L_inverse)
        schur_root = torch.linalg.cholesky(fant_fant_covar - lower_left.matmul(lower_left.transpose(-2, -1)))

        # Form new root Z = [L 0; lower_left schur_root]
        num_fant = schur_root.size(-2)
        m, n = L.shape[-2:]
        new_root = torch.zeros(m + num_fant, n + num_fant, dtype=L.dtype)
        new_root[..., :m, :n] = L
        new_root[..., m:, :n] = lower_left
        new_root[..., m:, n:] = schur_root

        # Use pseudo-inverse of Z as new inv root
        Q, R = torch.linalg.qr(new_root)
        Rdiag = torch.diagonal(R, dim1=-2, dim2=-1)
        # if R is almost singular, add jitter (Rdiag is a view, so this works)
        zeroish = Rdiag.abs() < 1e-6
        if torch.any(zeroish):
            Rdiag[zeroish] = 1e-6  # <-- IPL001: R is saved by QR's backward; Rdiag is a view of it
        new_covar_cache = torch.linalg.solve_triangular(R, Q.transpose(-2, -1), upper=True)
        new_covar_cache = new_covar_cache.transpose(-2, -1)
        return new_root, new_covar_cache


train_inputs = torch.tensor([[0.0], [0.5], [1.0]])
lengthscale = torch.tensor(0.7)
# rank-deficient Lanczos root: the last column carries nothing
covar_root = torch.tensor([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.2, 0.7, 0.0]])
covar_cache = 0.3 * torch.linalg.pinv(covar_root).transpose(-2, -1)
strategy = DefaultPredictionStrategy(train_inputs, lengthscale, covar_root, covar_cache)

fantasy_inputs = torch.tensor([[0.25], [0.8]], requires_grad=True)
new_root, new_covar_cache = strategy.get_fantasy_covar_cache(fantasy_inputs)
test_covar = rbf_covar(torch.tensor([[0.4]]), torch.cat([train_inputs, fantasy_inputs]), lengthscale)
pred_var_reduction = test_covar.matmul(new_covar_cache[:, :3]).pow(2).sum()
pred_var_reduction.backward()

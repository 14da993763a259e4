# label: safe
# why: safe_cholesky clones the caller's precision and adds the relative jitter to the clone's diagonal through `.data`; the jitter is a deliberate stop-gradient constant and the write lands before torch.linalg.cholesky records anything, so Gaussian.rsample's reparameterised gradients are unchanged and the caller's precision is untouched.
# source: https://github.com/pyro-ppl/pyro/commit/ed54fe808dc53f1fd41081e5d7c76f6537336f1e
from typing import Optional

import torch

torch.manual_seed(0)

CHOLESKY_RELATIVE_JITTER = 4.0  # in units of finfo.eps


def safe_cholesky(x):
    if x.size(-1) == 1:
        if CHOLESKY_RELATIVE_JITTER:
            x = x.clamp(min=torch.finfo(x.dtype).tiny)
        return x.sqrt()

    if CHOLESKY_RELATIVE_JITTER:
        # Add adaptive jitter.
        x = x.clone()
        x_max = x.data.abs().max(-1).values
        jitter = CHOLESKY_RELATIVE_JITTER * torch.finfo(x.dtype).eps * x_max
        x.data.diagonal(dim1=-1, dim2=-2).add_(jitter)

    return torch.linalg.cholesky(x)


def triangular_solve(x, y, upper=False, transpose=False):
    if y.size(-1) == 1:
        return x / y
    if transpose:
        y = y.transpose(-1, -2)
        upper = not upper
    return torch.linalg.solve_triangular(y, x, upper=upper)


class Gaussian:
    """
    Non-normalized Gaussian distribution, parameterised by an information vector
    ``info_vec = precision @ mean`` and a precision matrix.
    """

    def __init__(self, log_normalizer: torch.Tensor, info_vec: torch.Tensor, precision: torch.Tensor):
        assert info_vec.dim() >= 1
        assert precision.dim() >= 2
        assert precision.shape[-2:] == info_vec.shape[-1:] * 2
        self.log_normalizer = log_normalizer
        self.info_vec = info_vec
        self.precision = precision

    def dim(self):
        return self.info_vec.size(-1)

    @property
    def batch_shape(self):
        return torch.broadcast_shapes(self.info_vec.shape[:-1], self.precision.shape[:-2])

    def rsample(self, sample_shape=torch.Size(), noise: Optional[torch.Tensor] = None) -> torch.Tensor:
        """
        Reparameterized sampler.
        """
        P_chol = safe_cholesky(self.precision)
        loc = self.info_vec.unsqueeze(-1).cholesky_solve(P_chol).squeeze(-1)
        shape = sample_shape + self.batch_shape + (self.dim(), 1)
        if noise is None:
            noise = torch.randn(shape, dtype=loc.dtype, device=loc.device)
        else:
            noise = noise.reshape(shape)
        noise = triangular_solve(noise, P_chol, upper=False, transpose=True).squeeze(-1)
        sample: torch.Tensor = loc + noise
        return sample


def main():
    dim = 3
    factor = torch.randn(2, dim, dim, requires_grad=True)
    mean = torch.randn(2, dim, requires_grad=True)
    precision = factor @ factor.transpose(-1, -2) + torch.eye(dim)
    info_vec = (precision @ mean.unsqueeze(-1)).squeeze(-1)
    g = Gaussian(torch.zeros(2), info_vec, precision)

    noise = torch.randn(5, 2, dim)
    samples = g.rsample(torch.Size([5]), noise=noise)
    loss = (samples - 1.0).pow(2).sum()
    loss.backward()
    return loss.detach(), factor.grad, mean.grad, precision.detach()


loss, factor_grad, mean_grad, precision = main()

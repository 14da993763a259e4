# label: safe
# why: _vector_to_l_cholesky fills the Cholesky factor x column by column with slice assignments, but the column it squares is first copied with `.clone()`, so PowBackward saves the copy and the later in-place writes into x never touch a tensor autograd saved.
# source: https://github.com/pyro-ppl/pyro/blob/abef7047ffa509b969d1660c86d580997b4f1c70/pyro/distributions/lkj.py (PR https://github.com/pyro-ppl/pyro/pull/1746)
import math

import torch
from torch.distributions import constraints

torch.manual_seed(0)


def _vector_to_l_cholesky(z):
    D = (1.0 + math.sqrt(1.0 + 8.0 * z.shape[-1])) / 2.0
    if D % 1 != 0:
        raise ValueError("Correlation matrix transformation requires d choose 2 inputs")
    D = int(D)
    x = z.new_zeros(list(z.shape[:-1]) + [D, D])

    x[..., 0, 0] = 1
    x[..., 1:, 0] = z[..., :(D - 1)]
    i = D - 1
    last_squared_x = z.new_zeros(list(z.shape[:-1]) + [D])
    for j in range(1, D):
        distance_to_copy = D - 1 - j
        last_squared_x = last_squared_x[..., 1:] + x[..., j:, (j - 1)].clone() ** 2
        x[..., j, j] = (1 - last_squared_x[..., 0]).sqrt()
        x[..., (j + 1):, j] = z[..., i:(i + distance_to_copy)] * (1 - last_squared_x[..., 1:]).sqrt()
        i += distance_to_copy
    return x


class CorrLCholeskyTransform(torch.distributions.transforms.Transform):
    domain = constraints.real_vector
    bijective = True

    def _call(self, x):
        z = x.tanh()
        return _vector_to_l_cholesky(z)


def lkj_log_prob(L, eta):
    D = L.shape[-1]
    order = torch.arange(2, D + 1, dtype=L.dtype)
    exponent = D - order + 2 * (eta - 1)
    return (exponent * torch.log(L.diagonal(dim1=-2, dim2=-1)[..., 1:])).sum(-1)


def main():
    D = 4
    unconstrained = torch.nn.Parameter(0.3 * torch.randn(3, D * (D - 1) // 2))
    transform = CorrLCholeskyTransform()
    L = transform(unconstrained)
    log_prob = lkj_log_prob(L, eta=2.0)
    loss = -log_prob.sum()
    loss.backward()
    return L.detach(), loss.detach(), unconstrained.grad


L_factor, loss, unconstrained_grad = main()

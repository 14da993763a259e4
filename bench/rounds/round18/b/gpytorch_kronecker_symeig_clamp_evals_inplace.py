# label: hazard raises
# why: symeig/eigh saves its eigenvalue output for backward, and _symeig chops negative eigenvalues with evals_.clamp_min_(0.0) on that very output, so the marginal log likelihood cannot be differentiated
# source: https://github.com/cornellius-gp/gpytorch/commit/ecc00ebc28c233bc5ca856eed7384580a74f4ee3
import math
from functools import reduce

import torch
import torch.nn as nn

torch.manual_seed(0)


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.tensor(0.3))

    @property
    def lengthscale(self):
        return nn.functional.softplus(self.raw_lengthscale)

    def forward(self, x1, x2):
        diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)) / self.lengthscale
        return torch.exp(-0.5 * diff.pow(2).sum(-1))


class KroneckerProductLazyTensor:
    def __init__(self, *lazy_tensors):
        self.lazy_tensors = lazy_tensors
        self._memoize_cache = {}

    def evaluate(self):
        return reduce(torch.kron, self.lazy_tensors)

    def _symeig(self, eigenvectors=True):
        if "symeig" in self._memoize_cache:
            return self._memoize_cache["symeig"]
        evals, evecs = [], []
        for lazy_tensor in self.lazy_tensors:
            eval_tensor = lazy_tensor
            tensor_dtype = eval_tensor.dtype

            evals_, evecs_ = torch.linalg.eigh(eval_tensor.double())

            # we chop any negative eigenvalues
            evals_.clamp_min_(0.0)  # <-- IPL001: eigh saved its eigenvalue output for backward

            evals_ = evals_.type(tensor_dtype)
            evecs_ = evecs_.type(tensor_dtype)

            evals.append(evals_)
            evecs.append(evecs_)
        self._memoize_cache["symeig"] = (evals, evecs)
        return evals, evecs


class KroneckerProductAddedDiagLazyTensor:
    def __init__(self, kron, noise):
        self.kron = kron
        self.noise = noise

    def inv_quad_logdet(self, rhs):
        evals, evecs = self.kron._symeig(eigenvectors=True)
        evals = reduce(torch.kron, evals) + self.noise
        evecs = reduce(torch.kron, evecs)
        rotated = evecs.transpose(-1, -2) @ rhs
        inv_quad = (rotated.pow(2) / evals).sum()
        logdet = evals.log().sum()
        return inv_quad, logdet


class ExactMarginalLogLikelihood:
    def __call__(self, covar, y):
        inv_quad, logdet = covar.inv_quad_logdet(y)
        n = y.shape[-1]
        return -0.5 * (inv_quad + logdet + n * math.log(2 * math.pi)) / n


data_kernel = RBFKernel()
task_kernel = RBFKernel()
raw_noise = nn.Parameter(torch.tensor(-2.0))
x_data = torch.linspace(0, 1, 4).unsqueeze(-1)
x_task = torch.arange(3.0).unsqueeze(-1)
y = torch.randn(12)

covar = KroneckerProductAddedDiagLazyTensor(
    KroneckerProductLazyTensor(data_kernel(x_data, x_data), task_kernel(x_task, x_task)),
    nn.functional.softplus(raw_noise),
)
mll = ExactMarginalLogLikelihood()
loss = -mll(covar, y)
loss.backward()

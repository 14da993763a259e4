# label: hazard raises
# why: the eigenvalues returned by the symmetric eigendecomposition are saved for its backward, and clamp_min_ chops the negative ones in place, so backward through the Kronecker log-det fails.
# source: https://github.com/cornellius-gp/gpytorch/commit/5d9c38f29d32c258e38d9e794a5539749712d92b
import torch
import torch.nn as nn

torch.manual_seed(0)


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1))

    @property
    def lengthscale(self):
        return nn.functional.softplus(self.raw_lengthscale)

    def forward(self, x1, x2):
        diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)) / self.lengthscale
        return torch.exp(-0.5 * diff.pow(2).sum(-1))


class KroneckerProductLazyTensor:
    def __init__(self, *lazy_tensors):
        self.lazy_tensors = lazy_tensors

    def _symeig(self, eigenvectors=True):
        evals, evecs = [], []
        for lazy_tensor in self.lazy_tensors:
            eval_tensor = lazy_tensor
            tensor_dtype = eval_tensor.dtype
            evals_, evecs_ = torch.linalg.eigh(eval_tensor.double())
            # we chop any negative eigenvalues
            evals_.clamp_min_(0.0)  # <-- IPL001: eigh saved its eigenvalues for backward
            evals_ = evals_.type(tensor_dtype)
            evecs_ = evecs_.type(tensor_dtype)
            evals.append(evals_)
            evecs.append(evecs_)
        return evals, evecs

    def logdet_added_diag(self, noise):
        evals, _ = self._symeig(eigenvectors=True)
        kron_evals = evals[0]
        for e in evals[1:]:
            kron_evals = torch.kron(kron_evals, e)
        return torch.log(kron_evals + noise).sum()


kernel_t = RBFKernel()
kernel_s = RBFKernel()
t = torch.linspace(0, 1, 4).unsqueeze(-1)
s = torch.randn(3, 2)
covar = KroneckerProductLazyTensor(kernel_t(t, t), kernel_s(s, s))
logdet = covar.logdet_added_diag(noise=0.1)
logdet.backward()

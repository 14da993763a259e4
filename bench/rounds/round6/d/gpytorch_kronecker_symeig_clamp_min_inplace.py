# label: hazard raises
# why: the Kronecker factor eigenvalues are clamped with clamp_min_ in place, but the eigendecomposition saved its eigenvalue output for backward, so the marginal log likelihood backward fails
# source: https://github.com/cornellius-gp/gpytorch/pull/1203 (commit ecc00ebc "In place backwards fails in the MLL call"; bug introduced in 5798da03, gpytorch/lazy/kronecker_product_lazy_tensor.py)
import torch

torch.manual_seed(0)


def rbf_factor(x, lengthscale):
    sq_dist = (x.unsqueeze(-2) - x.unsqueeze(-3)).pow(2).sum(-1)
    return torch.exp(-0.5 * sq_dist / lengthscale.pow(2))


class KroneckerProductLazyTensor:
    def __init__(self, *lazy_tensors):
        self.lazy_tensors = lazy_tensors

    def _symeig(self, eigenvectors=True):
        evals, evecs = [], []
        for lazy_tensor in self.lazy_tensors:
            tensor_dtype = lazy_tensor.dtype
            eval_tensor = lazy_tensor
            evals_, evecs_ = torch.linalg.eigh(eval_tensor.double())

            # we chop any negative eigenvalues
            evals_.clamp_min_(0.0)  # <-- IPL001: evals_ is an eigh output saved for its backward

            evals_ = evals_.type(tensor_dtype)
            evecs_ = evecs_.type(tensor_dtype)
            evals.append(evals_)
            evecs.append(evecs_)

        evals = torch.kron(evals[0].unsqueeze(-1), evals[1].unsqueeze(-1)).squeeze(-1)
        evecs = torch.kron(evecs[0], evecs[1])
        return evals, evecs


def exact_mll(kron, noise, y):
    evals, evecs = kron._symeig()
    evals = evals + noise
    proj = evecs.transpose(-1, -2) @ y
    inv_quad = (proj.pow(2) / evals).sum()
    logdet = evals.log().sum()
    return -0.5 * (inv_quad + logdet)


raw_lengthscale = torch.tensor([0.3, -0.2], requires_grad=True)
noise = torch.tensor(0.1)
x1 = torch.linspace(0, 1, 3).unsqueeze(-1)
x2 = torch.linspace(0, 1, 4).unsqueeze(-1)
y = torch.randn(12)

lengthscale = torch.nn.functional.softplus(raw_lengthscale)
kron = KroneckerProductLazyTensor(rbf_factor(x1, lengthscale[0]), rbf_factor(x2, lengthscale[1]))
mll = exact_mll(kron, noise, y)
(-mll).backward()

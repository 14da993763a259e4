# label: safe
# why: the jitter is added in place to the diagonal of a fresh clone of the kernel matrix, which nothing saved for backward, so the marginal likelihood still differentiates through A
# source: https://github.com/cornellius-gp/gpytorch/pull/610 (merge commit 86f83bd4737b9618e513cfd3f08c68d7cd3deb09)
import math
import warnings

import torch

torch.manual_seed(0)


def psd_safe_cholesky(A, upper=False, out=None, jitter=None):
    try:
        L = torch.linalg.cholesky(A, upper=upper)
        return L
    except RuntimeError as e:
        if jitter is None:
            jitter = 1e-6 if A.dtype == torch.float32 else 1e-8
        for i in range(3):
            jitter = jitter * (10 ** i)
            Aprime = A.clone()
            Aprime.diagonal(dim1=-2, dim2=-1).add_(jitter)
            try:
                L = torch.linalg.cholesky(Aprime, upper=upper)
                return L
            except RuntimeError:
                continue
        warnings.warn("A not p.d., added jitter of {} to the diagonal".format(jitter), RuntimeWarning)
        raise e


def rbf_kernel(x1, x2, raw_lengthscale, raw_outputscale):
    lengthscale = torch.nn.functional.softplus(raw_lengthscale)
    outputscale = torch.nn.functional.softplus(raw_outputscale)
    dist = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).pow(2).sum(-1)
    return outputscale * torch.exp(-0.5 * dist / lengthscale ** 2)


def exact_marginal_log_likelihood(train_x, train_y, raw_lengthscale, raw_outputscale):
    K = rbf_kernel(train_x, train_x, raw_lengthscale, raw_outputscale)
    L = psd_safe_cholesky(K.double())
    alpha = torch.cholesky_solve(train_y.double().unsqueeze(-1), L)
    n = train_y.shape[-1]
    mll = -0.5 * (train_y.double().unsqueeze(-1) * alpha).sum() - L.diagonal().log().sum() - 0.5 * n * math.log(2 * math.pi)
    return mll / n


# duplicated inputs make the noise-free kernel matrix only positive semi-definite
train_x = torch.tensor([[0.0], [0.5], [0.5], [1.0]])
train_y = torch.sin(3 * train_x).squeeze(-1)
raw_lengthscale = torch.tensor(0.0, requires_grad=True)
raw_outputscale = torch.tensor(0.5, requires_grad=True)

mll = exact_marginal_log_likelihood(train_x, train_y, raw_lengthscale, raw_outputscale)
loss = -mll
loss.backward()

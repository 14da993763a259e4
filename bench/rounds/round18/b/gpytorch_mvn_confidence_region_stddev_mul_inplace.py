# label: hazard raises
# why: confidence_region doubles the standard deviation with self.stddev.mul_(2), overwriting the sqrt output that SqrtBackward saved, so backpropagating an upper-confidence-bound acquisition fails
# source: https://github.com/cornellius-gp/gpytorch/commit/9cd71e49416e5781fec596fb37cafdba833fe14c
import math

import torch
from torch.distributions import MultivariateNormal as TMultivariateNormal

torch.manual_seed(0)


class MultivariateNormal(TMultivariateNormal):
    def __init__(self, mean, covariance_matrix, validate_args=False):
        super().__init__(loc=mean, covariance_matrix=covariance_matrix, validate_args=validate_args)

    @property
    def variance(self):
        diag = torch.diagonal(self.covariance_matrix, dim1=-2, dim2=-1)
        return diag.clamp_min(1e-10)

    def confidence_region(self):
        """Returns 2 standard deviations above and below the mean."""
        std2 = self.stddev.mul_(2)  # <-- IPL001: stddev is sqrt(variance), whose output SqrtBackward saved
        mean = self.mean
        return mean.sub(std2), mean.add(std2)


class ExactGPModel(torch.nn.Module):
    def __init__(self, train_x, train_y):
        super().__init__()
        self.train_x, self.train_y = train_x, train_y
        self.raw_lengthscale = torch.nn.Parameter(torch.tensor(0.0))
        self.raw_noise = torch.nn.Parameter(torch.tensor(-3.0))

    def kernel(self, x1, x2):
        ls = torch.nn.functional.softplus(self.raw_lengthscale)
        return torch.exp(-0.5 * torch.cdist(x1 / ls, x2 / ls) ** 2)

    def posterior(self, test_x):
        noise = torch.nn.functional.softplus(self.raw_noise)
        K = self.kernel(self.train_x, self.train_x) + noise * torch.eye(len(self.train_x))
        K_s = self.kernel(test_x, self.train_x)
        K_ss = self.kernel(test_x, test_x)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(self.train_y.unsqueeze(-1), L)
        mean = (K_s @ alpha).squeeze(-1)
        v = torch.cholesky_solve(K_s.transpose(-1, -2), L)
        covar = K_ss - K_s @ v + 1e-6 * torch.eye(len(test_x))
        return MultivariateNormal(mean, covar)


train_x = torch.linspace(0, 1, 8).unsqueeze(-1)
train_y = torch.sin(train_x * 2 * math.pi).squeeze(-1)
model = ExactGPModel(train_x, train_y)

# optimise candidate points for an upper-confidence-bound acquisition
candidates = torch.rand(3, 1, requires_grad=True)
posterior = model.posterior(candidates)
lower, upper = posterior.confidence_region()
ucb = upper.sum()
(-ucb).backward()

# label: safe
# why: clamp_min_ acts on the fresh difference mean - best (subtraction keeps nothing for backward), so clamping it in place gives the same EI and the same gradient w.r.t. X as clamp_min
# source: https://github.com/pytorch/botorch/blob/f4729afb5125888566b29d324411191e3245eb65/botorch/acquisition/functional/acquisition.py
from numbers import Number

import torch
from torch.distributions import Normal

torch.manual_seed(0)


class Posterior:
    def __init__(self, mean, variance):
        self.mean = mean
        self.variance = variance


class SimpleGP:
    def __init__(self, train_X, train_Y, lengthscale=0.5, noise=1e-2):
        self.train_X = train_X
        self.train_Y = train_Y
        self.lengthscale = lengthscale
        K = self.kernel(train_X, train_X) + noise * torch.eye(train_X.shape[0])
        self.L = torch.linalg.cholesky(K)
        self.alpha = torch.cholesky_solve(train_Y, self.L)

    def kernel(self, a, b):
        return torch.exp(-0.5 * torch.cdist(a, b).pow(2) / self.lengthscale ** 2)

    def posterior(self, X):
        Ks = self.kernel(X.reshape(-1, X.shape[-1]), self.train_X)
        mean = (Ks @ self.alpha).reshape(X.shape[:-1])
        v = torch.cholesky_solve(Ks.t(), self.L)
        var = (1.0 - (Ks * v.t()).sum(-1)).clamp_min(1e-9).reshape(X.shape[:-1])
        return Posterior(mean, var)


def expected_improvement(X, model, best_f):
    if isinstance(best_f, Number):
        best_f = torch.tensor(best_f, dtype=X.dtype, device=X.device)
    best = best_f.view(X.shape[:-2] + torch.Size([1]))
    posterior = model.posterior(X)
    mean, sigma = posterior.mean, posterior.variance.sqrt()
    u = (mean - best).clamp_min_(0) / sigma
    normal = Normal(torch.zeros_like(u), torch.ones_like(u))
    ucdf = normal.cdf(u)
    updf = torch.exp(normal.log_prob(u))
    return sigma * (updf + u * ucdf)


train_X = torch.rand(6, 2)
train_Y = torch.sin(3 * train_X).sum(-1, keepdim=True)
model = SimpleGP(train_X, train_Y)
X = torch.rand(4, 1, 2, requires_grad=True)
optimizer = torch.optim.Adam([X], lr=0.05)
for _ in range(3):
    optimizer.zero_grad()
    ei = expected_improvement(X, model, best_f=train_Y.max().expand(4) - 0.5)
    (-ei.sum()).backward()
    optimizer.step()
final_X = X.detach().clone()

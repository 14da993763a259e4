# label: safe
# why: ExactMarginalLogLikelihood adds the prior log-probs with res.add_() and scales with res.div_(num_data) on the fresh log-marginal-likelihood scalar, which no backward formula saves, so the in-place updates leave the hyperparameter gradients unchanged.
# source: https://github.com/cornellius-gp/gpytorch/blob/d8bd49783453d980f83aa557409b007121379f61/gpytorch/mlls/exact_marginal_log_likelihood.py (parent of commit d8bd497834)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import MultivariateNormal, Gamma

torch.manual_seed(0)


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1))
        self.lengthscale_prior = Gamma(3.0, 6.0)

    @property
    def lengthscale(self):
        return F.softplus(self.raw_lengthscale)

    def forward(self, x1, x2):
        diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)) / self.lengthscale
        return torch.exp(-0.5 * diff.pow(2).sum(-1))


class GaussianLikelihood(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_noise = nn.Parameter(torch.tensor(-1.0))

    @property
    def noise(self):
        return F.softplus(self.raw_noise) + 1e-4

    def forward(self, function_dist):
        covar = function_dist.covariance_matrix + self.noise * torch.eye(function_dist.loc.shape[-1])
        return MultivariateNormal(function_dist.loc, covar)


class ExactGPModel(nn.Module):
    def __init__(self, train_x):
        super().__init__()
        self.train_x = train_x
        self.mean_constant = nn.Parameter(torch.zeros(1))
        self.covar_module = RBFKernel()

    def added_loss_terms(self):
        return []

    def forward(self, x):
        mean_x = self.mean_constant.expand(x.shape[0])
        covar_x = self.covar_module(x, x) + 1e-6 * torch.eye(x.shape[0])
        return MultivariateNormal(mean_x, covar_x)


class ExactMarginalLogLikelihood(nn.Module):
    def __init__(self, likelihood, model):
        super().__init__()
        self.likelihood = likelihood
        self.model = model

    def named_priors(self):
        kernel = self.model.covar_module
        yield "covar_module.lengthscale_prior", kernel, kernel.lengthscale_prior, lambda m: m.lengthscale, None

    def _add_other_terms(self, res, params):
        for added_loss_term in self.model.added_loss_terms():
            res = res.add(added_loss_term.loss(*params))
        for name, module, prior, closure, _ in self.named_priors():
            res.add_(prior.log_prob(closure(module)).sum())
        return res

    def forward(self, function_dist, target, *params):
        output = self.likelihood(function_dist, *params)
        res = output.log_prob(target)
        res = self._add_other_terms(res, params)
        num_data = function_dist.event_shape.numel()
        return res.div_(num_data)


def main():
    train_x = torch.linspace(0, 1, 12).unsqueeze(-1)
    train_y = torch.sin(train_x.squeeze(-1) * (2 * math.pi)) + 0.1 * torch.randn(12)
    model = ExactGPModel(train_x)
    likelihood = GaussianLikelihood()
    mll = ExactMarginalLogLikelihood(likelihood, model)
    optimizer = torch.optim.Adam(list(model.parameters()) + list(likelihood.parameters()), lr=0.1)
    for _ in range(5):
        optimizer.zero_grad()
        output = model(train_x)
        loss = -mll(output, train_y)
        loss.backward()
        optimizer.step()
    return loss.detach(), model.covar_module.raw_lengthscale.detach().clone(), likelihood.raw_noise.grad


loss, raw_lengthscale, noise_grad = main()

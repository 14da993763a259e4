# label: safe
# why: ConstrainedExpectedImprovement multiplies `ei` (output of a product whose backward keeps only its inputs) and the fresh `torch.ones` prob_feas buffer in place; autograd keeps a copy of the original value it needs for these mul_ calls, so gradients w.r.t. X match the out-of-place version.
# source: https://github.com/pytorch/botorch/commit/b8057d47f458e31a2cef46e8f95d1b105cd5ad30 (pre-change botorch/acquisition/analytic.py)
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)


class Posterior:
    def __init__(self, mean, variance):
        self.mean = mean
        self.variance = variance


class MultiOutputModel(nn.Module):
    """Stand-in for a multi-output GP: objective in column 0, constraints in 1 and 2."""

    def __init__(self, d=3, t=3):
        super().__init__()
        self.mean_net = nn.Linear(d, t)
        self.var_net = nn.Linear(d, t)

    def posterior(self, X):
        return Posterior(self.mean_net(X), nn.functional.softplus(self.var_net(X)) + 1e-3)


def _construct_dist(means, sigmas, inds):
    mean = means.index_select(dim=-1, index=inds)
    sigma = sigmas.index_select(dim=-1, index=inds)
    return Normal(loc=mean, scale=sigma)


class ConstrainedExpectedImprovement(nn.Module):
    def __init__(self, model, best_f, objective_index, constraints, maximize=True):
        super().__init__()
        self.model = model
        self.objective_index = objective_index
        self.maximize = maximize
        self.register_buffer("best_f", torch.as_tensor(best_f))
        self.constraint_lower_inds = torch.tensor([i for i, (lo, up) in constraints.items() if up is None])
        self.constraint_upper_inds = torch.tensor([i for i, (lo, up) in constraints.items() if lo is None])
        self.register_buffer("constraint_lower", torch.tensor([lo for i, (lo, up) in constraints.items() if up is None]))
        self.register_buffer("constraint_upper", torch.tensor([up for i, (lo, up) in constraints.items() if lo is None]))

    def forward(self, X):
        posterior = self.model.posterior(X.unsqueeze(dim=-2))
        means = posterior.mean.squeeze(dim=-2)  # (b) x t
        sigmas = posterior.variance.squeeze(dim=-2).sqrt().clamp_min(1e-9)  # (b) x t

        mean_obj = means[..., [self.objective_index]]
        sigma_obj = sigmas[..., [self.objective_index]]
        u = (mean_obj - self.best_f.expand_as(mean_obj)) / sigma_obj
        if not self.maximize:
            u = -u
        normal = Normal(torch.zeros_like(u), torch.ones_like(u))
        ei_pdf = torch.exp(normal.log_prob(u))  # (b) x 1
        ei_cdf = normal.cdf(u)
        ei = sigma_obj * (ei_pdf + u * ei_cdf)
        prob_feas = self._compute_prob_feas(X, means, sigmas)
        ei.mul_(prob_feas)
        return ei.squeeze(dim=-1)

    def _compute_prob_feas(self, X, means, sigmas):
        output_shape = list(X.shape)
        output_shape[-1] = 1
        prob_feas = torch.ones(output_shape, device=X.device, dtype=X.dtype)
        if len(self.constraint_lower_inds) > 0:
            normal_lower = _construct_dist(means, sigmas, self.constraint_lower_inds)
            prob_feas.mul_(torch.prod(1 - normal_lower.cdf(self.constraint_lower), dim=-1, keepdim=True))
        if len(self.constraint_upper_inds) > 0:
            normal_upper = _construct_dist(means, sigmas, self.constraint_upper_inds)
            prob_feas.mul_(torch.prod(normal_upper.cdf(self.constraint_upper), dim=-1, keepdim=True))
        return prob_feas


def main():
    model = MultiOutputModel()
    acqf = ConstrainedExpectedImprovement(
        model, best_f=0.2, objective_index=0, constraints={1: (None, 0.5), 2: (-0.3, None)}
    )
    X = torch.rand(5, 3, requires_grad=True)
    acq_value = acqf(X)
    acq_value.sum().backward()
    return acq_value.detach(), X.grad


acq_value, X_grad = main()

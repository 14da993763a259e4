# label: safe
# why: prob_feas starts as a fresh ones tensor and ei is the output of a mul that saved only its inputs, so the in-place mul_ updates feed autograd correctly
# source: https://github.com/pytorch/botorch/commit/f01705151ab6949bb150ea3a3452900f7b159ed3
import torch
from torch.distributions import Normal

torch.manual_seed(0)


class ConstrainedExpectedImprovement(torch.nn.Module):
    def __init__(self, best_f, objective_index, constraints):
        super().__init__()
        self.best_f = best_f
        self.objective_index = objective_index
        self.constraints = constraints
        self._preprocess_constraint_bounds(constraints)

    def _preprocess_constraint_bounds(self, constraints):
        con_lower, con_lower_inds = [], []
        con_upper, con_upper_inds = [], []
        for k in sorted(constraints.keys()):
            lower, upper = constraints[k]
            if lower is not None:
                con_lower.append(lower)
                con_lower_inds.append(k)
            if upper is not None:
                con_upper.append(upper)
                con_upper_inds.append(k)
        self.constraint_lower_inds = torch.tensor(con_lower_inds, dtype=torch.long)
        self.constraint_lower = torch.tensor(con_lower)
        self.constraint_upper_inds = torch.tensor(con_upper_inds, dtype=torch.long)
        self.constraint_upper = torch.tensor(con_upper)

    def posterior(self, X):
        # toy two-output GP posterior (objective, constraint)
        means = torch.stack([torch.sin(3 * X).sum(-1), X.pow(2).sum(-1) - 0.5], dim=-1)
        sigmas = torch.stack([0.1 + X.abs().sum(-1), 0.2 + 0.1 * X.sum(-1).abs()], dim=-1)
        return means, sigmas

    def _compute_prob_feas(self, X, means, sigmas):
        output_shape = X.shape[:-2] + torch.Size([1])
        prob_feas = torch.ones(output_shape, device=X.device, dtype=X.dtype)
        if len(self.constraint_lower_inds) > 0:
            normal_lower = Normal(means[..., self.constraint_lower_inds], sigmas[..., self.constraint_lower_inds])
            prob_feas.mul_(torch.prod(1 - normal_lower.cdf(self.constraint_lower), dim=-1, keepdim=True))
        if len(self.constraint_upper_inds) > 0:
            normal_upper = Normal(means[..., self.constraint_upper_inds], sigmas[..., self.constraint_upper_inds])
            prob_feas.mul_(torch.prod(normal_upper.cdf(self.constraint_upper), dim=-1, keepdim=True))
        return prob_feas

    def forward(self, X):
        means, sigmas = self.posterior(X.squeeze(-2))
        mean_obj = means[..., [self.objective_index]]
        sigma_obj = sigmas[..., [self.objective_index]]
        u = (mean_obj - self.best_f) / sigma_obj
        normal = Normal(torch.zeros_like(u), torch.ones_like(u))
        ei_pdf = torch.exp(normal.log_prob(u))
        ei_cdf = normal.cdf(u)
        ei = sigma_obj * (ei_pdf + u * ei_cdf)
        prob_feas = self._compute_prob_feas(X, means, sigmas)
        ei.mul_(prob_feas)
        return ei.squeeze(dim=-1)


acqf = ConstrainedExpectedImprovement(best_f=0.2, objective_index=0, constraints={1: (None, 0.0)})
X = torch.rand(5, 1, 2, requires_grad=True)
ei = acqf(X)
ei.sum().backward()

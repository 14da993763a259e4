# label: hazard silent
# why: with an identity objective (Z[..., 0]) the objective tensor is a view of the posterior samples, so apply_constraints_ shifting and clamping obj in place also rewrites samples[..., 0], and a constraint on that same outcome is then evaluated on the shifted values
# source: https://github.com/pytorch/botorch/commit/07c3dc8c30332e332b718ea1eb10bc311a8851fe
import torch
from torch.nn import Module

torch.manual_seed(0)


def soft_eval_constraint(lhs, eta=1e-3):
    if eta <= 0:
        raise ValueError("eta must be positive")
    return torch.sigmoid(-lhs / eta)


def apply_constraints_nonnegative_soft_(obj, constraints, samples, eta):
    """`obj` is modified in-place."""
    if constraints is not None:
        obj.clamp_min_(0)  # <-- IPL002: obj aliases samples[..., 0], which the constraints below read again
        for constraint in constraints:
            obj.mul_(soft_eval_constraint(constraint(samples), eta=eta))


def apply_constraints_(obj, constraints, samples, infeasible_cost):
    """(1) add `M` to make obj nonnegative, (2) apply constraints using the sigmoid
    approximation, (3) shift by `-M`. `obj` is modified in-place."""
    if constraints is not None:
        # obj has dimensions n_samples x b x q
        obj.add_(infeasible_cost)  # <-- IPL002: shifts samples[..., 0] too (obj is a view of samples)
        apply_constraints_nonnegative_soft_(obj=obj, constraints=constraints, samples=samples, eta=1e-1)
        obj.add_(-infeasible_cost)


class GenericMCObjective(Module):
    def __init__(self, objective):
        super().__init__()
        self.objective = objective

    def forward(self, samples):
        return self.objective(samples)


class ConstrainedMCObjective(GenericMCObjective):
    def __init__(self, objective, constraints, infeasible_cost=0.0):
        super().__init__(objective=objective)
        self.constraints = constraints
        self.register_buffer("infeasible_cost", torch.tensor(infeasible_cost))

    def forward(self, samples):
        obj = super().forward(samples=samples)
        apply_constraints_(
            obj=obj,
            constraints=self.constraints,
            samples=samples,
            infeasible_cost=self.infeasible_cost,
        )
        return obj


class ToyMultiOutputPosterior:
    """b x q x t posterior with a fixed Cholesky factor per output, sampled by reparameterization."""

    def __init__(self, X, W, noise_chol):
        self.mean = torch.stack((torch.sin(X @ W[:, 0]), torch.cos(X @ W[:, 1])), dim=-1)
        self.noise_chol = noise_chol

    def rsample(self, base_samples):
        # base_samples: n_samples x b x q x t
        return self.mean.unsqueeze(0) + base_samples @ self.noise_chol


class qExpectedImprovement(Module):
    def __init__(self, best_f, objective, n_samples=64):
        super().__init__()
        self.best_f = best_f
        self.objective = objective
        self.base_samples = torch.randn(n_samples, 2, 3, 2)

    def forward(self, X, W, noise_chol):
        posterior = ToyMultiOutputPosterior(X, W, noise_chol)
        samples = posterior.rsample(self.base_samples)
        obj = self.objective(samples)
        obj = (obj - self.best_f).clamp_min_(0)
        q_ei = obj.max(dim=2)[0].mean(dim=0)
        return q_ei, samples


W = torch.randn(4, 2)
noise_chol = torch.tensor([[0.3, 0.0], [0.1, 0.2]])
X = torch.rand(2, 3, 4, requires_grad=True)  # b x q x d candidate batches

objective = ConstrainedMCObjective(
    objective=lambda Z: Z[..., 0],
    constraints=[
        lambda Z: Z[..., 0] - 0.8,  # the objective outcome itself must stay below 0.8
        lambda Z: Z[..., 1] - 0.5,
    ],
    infeasible_cost=2.0,
)
acqf = qExpectedImprovement(best_f=0.1, objective=objective)
q_ei, samples = acqf(X, W, noise_chol)
q_ei.sum().backward()
samples = samples.detach()

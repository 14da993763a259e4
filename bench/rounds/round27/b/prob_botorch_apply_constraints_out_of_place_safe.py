# label: safe
# why: the fixed apply_constraints builds new tensors instead of writing into obj, so the objective's view Y[..., 0] of the posterior samples is never modified and the constraint reads the true sample values.
# source: https://github.com/pytorch/botorch/commit/b91c4f6c30a22c3a672fd23be48fb3f279fdb49a (botorch/utils/objective.py after the fix)
import torch
from torch import Tensor
from torch.nn import Module

torch.manual_seed(0)


def soft_eval_constraint(lhs: Tensor, eta: float = 1e-3) -> Tensor:
    if eta <= 0:
        raise ValueError("eta must be positive")
    return torch.sigmoid(-lhs / eta)


def apply_constraints_nonnegative_soft(obj, constraints, samples, eta):
    obj = obj.clamp_min(0)  # Enforce non-negativity with constraints
    for constraint in constraints:
        obj = obj.mul(soft_eval_constraint(constraint(samples), eta=eta))
    return obj


def apply_constraints(obj, constraints, samples, infeasible_cost):
    # obj has dimensions n_samples x b x q
    obj = obj.add(infeasible_cost)  # now it is nonnegative
    obj = apply_constraints_nonnegative_soft(obj=obj, constraints=constraints, samples=samples, eta=0.1)
    return obj.add(-infeasible_cost)


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
        self.infeasible_cost = infeasible_cost

    def forward(self, samples):
        obj = super().forward(samples=samples)
        return apply_constraints(obj=obj, constraints=self.constraints, samples=samples,
                                 infeasible_cost=self.infeasible_cost)


class ToyPosteriorModel(Module):
    def __init__(self, train_X, train_Y):
        super().__init__()
        self.train_X = train_X
        self.train_Y = train_Y

    def posterior_samples(self, X, base_samples):
        # kernel-regression style posterior mean and a fixed diagonal scale
        weights = torch.softmax(-torch.cdist(X, self.train_X) ** 2, dim=-1)
        mean = weights @ self.train_Y
        scale = 0.1 + weights.max(dim=-1, keepdim=True)[0]
        return mean.unsqueeze(0) + scale.unsqueeze(0) * base_samples


class qExpectedImprovement(Module):
    def __init__(self, model, best_f, objective, base_samples):
        super().__init__()
        self.model = model
        self.best_f = best_f
        self.objective = objective
        self.base_samples = base_samples

    def forward(self, X):
        samples = self.model.posterior_samples(X, self.base_samples)
        obj = self.objective(samples)
        obj = (obj - self.best_f).clamp_min(0)
        q_ei = obj.max(dim=-1)[0].mean(dim=0)
        return q_ei


def main():
    train_X = torch.rand(6, 2)
    train_Y = torch.stack([torch.sin(3 * train_X[:, 0]), train_X.sum(-1)], dim=-1)
    model = ToyPosteriorModel(train_X, train_Y)
    objective = ConstrainedMCObjective(
        objective=lambda Y: Y[..., 0],
        constraints=[lambda Y: Y[..., 0] - 0.8],
        infeasible_cost=1.0,
    )
    base_samples = torch.randn(16, 3, 2)
    acqf = qExpectedImprovement(model, best_f=0.2, objective=objective, base_samples=base_samples)
    X = torch.rand(3, 2, requires_grad=True)
    value = acqf(X)
    value.backward()
    return value.detach(), X.grad


value, X_grad = main()

# label: hazard silent
# why: _log_likelihood_over_iid_conditions calls x.transpose_(0, 1) on the caller's tensor, which is the potential's stored self.x_o, so every evaluation flips the stored observation and the next call silently scores the transposed (trial <-> observation) data.
# source: https://github.com/sbi-dev/sbi/commit/ced7e156c49ef263f60fc52d377558e8701cc2e4 ("fix shape handling")
import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


class ConditionalGaussianEstimator(nn.Module):
    """Toy ConditionalDensityEstimator: x | condition ~ N(net(condition), exp(log_std))."""

    def __init__(self, condition_dim, event_dim):
        super().__init__()
        self.net = nn.Linear(condition_dim, event_dim)
        self.log_std = nn.Parameter(torch.zeros(event_dim))

    def log_prob(self, input: Tensor, condition: Tensor) -> Tensor:
        # input: (sample_dim, batch_dim, *event_shape), condition: (batch_dim, condition_dim)
        mean = self.net(condition)
        dist = torch.distributions.Normal(mean, self.log_std.exp())
        return dist.log_prob(input).sum(-1)


def _log_likelihood_over_iid_conditions(
    x: Tensor,
    theta_without_condition: Tensor,
    condition: Tensor,
    estimator: ConditionalGaussianEstimator,
    track_gradients: bool = False,
) -> Tensor:
    assert x.dim() > 2, "x must have shape (sample_dim, batch_dim, *event_shape)."
    num_trials, num_xs = x.shape[:2]
    num_thetas = theta_without_condition.shape[0]
    assert condition.shape[0] == num_trials, "Condition batch size must match the number of iid trials in x."

    # move the iid batch dimension onto the batch dimension of theta and repeat it there
    x.transpose_(0, 1)  # <-- IPL004
    x_repeated = x.repeat_interleave(num_thetas, dim=1)

    # construct theta and condition to cover all trial-theta combinations
    theta_with_condition = torch.cat(
        [
            theta_without_condition.repeat(num_trials, 1),  # repeat ABAB
            condition.repeat_interleave(num_thetas, dim=0),  # repeat AABB
        ],
        dim=-1,
    )

    with torch.set_grad_enabled(track_gradients):
        log_likelihood_trial_batch = estimator.log_prob(x_repeated, condition=theta_with_condition)
        log_likelihood_trial_sum = log_likelihood_trial_batch.reshape(num_xs, num_trials, num_thetas).sum(1)
    return log_likelihood_trial_sum


class LikelihoodBasedPotential:
    def __init__(self, likelihood_estimator, x_o):
        self.likelihood_estimator = likelihood_estimator
        self.x_o = x_o

    def condition_on_theta(self, theta, condition, x_o=None):
        return _log_likelihood_over_iid_conditions(
            x=x_o if x_o is not None else self.x_o,
            theta_without_condition=theta,
            condition=condition,
            estimator=self.likelihood_estimator,
            track_gradients=True,
        )


def main():
    num_trials, num_xs, event_dim = 3, 3, 2
    estimator = ConditionalGaussianEstimator(condition_dim=2 + 1, event_dim=event_dim)
    x_o = torch.randn(num_trials, num_xs, event_dim)
    potential = LikelihoodBasedPotential(estimator, x_o)
    condition = torch.randn(num_trials, 1)
    theta = torch.randn(4, 2)
    first = potential.condition_on_theta(theta, condition)
    second = potential.condition_on_theta(theta, condition)
    (first.sum() + second.sum()).backward()
    return first.detach(), second.detach(), estimator.net.weight.grad


first_ll, second_ll, net_weight_grad = main()

# label: safe
# why: in nbinomial_scale_decouple `alpha /= scale + 1.0` divides, in place, the fresh `softplus(alpha) + 1e-8` sum; AddBackward saves nothing and the in-place division's own backward only needs the (non-grad) divisor, so the NegativeBinomial NLL backpropagates correctly into the network head.
# source: https://github.com/Nixtla/neuralforecast/pull/1289
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import NegativeBinomial, constraints

torch.manual_seed(0)


def nbinomial_scale_decouple(output, loc=None, scale=None):
    """Negative Binomial Scale Decouple

    Stabilizes model's output optimization, by learning total
    count and logits based on anchoring `loc`, `scale`.
    Also adds Negative Binomial domain protection to the distribution parameters.
    """
    mu, alpha = output
    mu = F.softplus(mu) + 1e-8
    alpha = F.softplus(alpha) + 1e-8  # alpha = 1/total_counts
    if (loc is not None) and (scale is not None):
        mu = mu * scale + loc
        alpha /= scale + 1.0

    # mu = total_count * (probs/(1-probs))
    # => probs = mu / (total_count + mu)
    # => probs = mu / [total_count * (1 + mu * (1/total_count))]
    total_count = 1.0 / alpha
    probs = (mu * alpha / (1.0 + mu * alpha)) + 1e-8
    return (total_count, probs)


def weighted_average(x, weights=None, dim=None):
    if weights is not None:
        weighted_tensor = torch.where(weights != 0, x * weights, torch.zeros_like(x))
        sum_weights = torch.clamp(weights.sum(dim=dim) if dim else weights.sum(), min=1.0)
        return (weighted_tensor.sum(dim=dim) if dim else weighted_tensor.sum()) / sum_weights
    return x.mean(dim=dim)


class DistributionLoss(torch.nn.Module):
    def __init__(self, distribution="NegativeBinomial", horizon_weight=None, **distribution_kwargs):
        super(DistributionLoss, self).__init__()
        available_distributions = dict(NegativeBinomial=NegativeBinomial)
        scale_decouples = dict(NegativeBinomial=nbinomial_scale_decouple)
        param_names = dict(NegativeBinomial=["-total_count", "-logits"])
        self.horizon_weight = horizon_weight
        self.domain_map = self._domain_map
        self.distribution = distribution
        self._base_distribution = available_distributions[distribution]
        self.scale_decouple = scale_decouples[distribution]
        self.distribution_kwargs = distribution_kwargs
        self.param_names = param_names[distribution]
        self.outputsize_multiplier = len(self.param_names)

    def _domain_map(self, input: torch.Tensor):
        output = torch.tensor_split(input, self.outputsize_multiplier, dim=2)
        return output

    def get_distribution(self, distr_args, **distribution_kwargs):
        distr = self._base_distribution(*distr_args, **distribution_kwargs)
        self.distr_mean = distr.mean
        if self.distribution in ("Poisson", "NegativeBinomial"):
            distr.support = constraints.nonnegative
        return distr

    def _compute_weights(self, y, mask):
        if mask is None:
            mask = torch.ones_like(y)
        if self.horizon_weight is None:
            weights = torch.ones_like(mask)
        else:
            weights = self.horizon_weight.clone()
            weights = weights[None, :, None].to(mask.device)
            weights = torch.ones_like(mask, device=mask.device) * weights
        return weights * mask

    def __call__(self, y, distr_args, mask=None):
        # Instantiate Scaled Decoupled Distribution
        distr = self.get_distribution(distr_args=distr_args, **self.distribution_kwargs)
        loss_values = -distr.log_prob(y)
        loss_weights = self._compute_weights(y=y, mask=mask)
        return weighted_average(loss_values, weights=loss_weights)


class MLPForecaster(nn.Module):
    """Small stand-in for a NeuralForecast MLP model with a DistributionLoss head."""

    def __init__(self, input_size, h, loss):
        super().__init__()
        self.h = h
        self.loss = loss
        self.mlp = nn.Sequential(nn.Linear(input_size, 32), nn.ReLU())
        self.out = nn.Linear(32, h * loss.outputsize_multiplier)

    def forward(self, insample_y):
        hidden = self.mlp(insample_y)
        output = self.out(hidden).reshape(len(insample_y), self.h, self.loss.outputsize_multiplier)
        return self.loss.domain_map(output)


def main():
    h, input_size = 4, 12
    loss = DistributionLoss(distribution="NegativeBinomial")
    model = MLPForecaster(input_size, h, loss)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    counts = torch.poisson(torch.full((16, input_size + h), 20.0))
    insample_y, outsample_y = counts[:, :input_size], counts[:, input_size:].unsqueeze(-1)
    # temporal scaler statistics, as produced by the model's TemporalNorm
    loc = insample_y.mean(dim=1, keepdim=True).unsqueeze(-1)
    scale = insample_y.std(dim=1, keepdim=True).unsqueeze(-1)

    output = model((insample_y - loc.squeeze(-1)) / scale.squeeze(-1))
    distr_args = loss.scale_decouple(output=output, loc=loc, scale=scale)
    train_loss = loss(y=outsample_y, distr_args=distr_args)
    optimizer.zero_grad()
    train_loss.backward()
    optimizer.step()
    return train_loss.detach(), model.out.weight.grad.clone()


train_loss, out_weight_grad = main()

# label: safe
# why: the fix in the same commit: after `torch.logsumexp` the normalisation terms are subtracted out of place (`result = result - ...`), leaving the saved logsumexp output intact, so the maximum-likelihood fit backpropagates.
# source: https://github.com/pyro-ppl/pyro/commit/a433671bedfa960d413fdff1851e3691b34cfcfb
import math

import torch
from torch.distributions import Categorical, Distribution, constraints

torch.manual_seed(0)


class MixtureOfDiagNormalsSharedCovariance(Distribution):
    """
    Mixture of Normal distributions with diagonal covariance matrices and a
    shared D-dimensional scale `coord_scale`; K component means `locs` and
    K mixture logits `component_logits`.
    """
    has_rsample = True
    arg_constraints = {"locs": constraints.real, "coord_scale": constraints.positive,
                       "component_logits": constraints.real}

    def __init__(self, locs, coord_scale, component_logits):
        self.batch_mode = (locs.dim() > 2)
        assert(self.batch_mode or locs.dim() == 2), \
            "The locs parameter in MixtureOfDiagNormals should be K x D dimensional (or ... x B x K x D in batch mode)"
        if not self.batch_mode:
            assert(coord_scale.dim() == 1), "The coord_scale parameter in MixtureOfDiagNormals should be D dimensional"
            assert(component_logits.dim() == 1), \
                "The component_logits parameter in MixtureOfDiagNormals should be K dimensional"
            assert(component_logits.size(0) == locs.size(0))
            batch_shape = ()
        else:
            batch_shape = tuple(locs.shape[:-2])
        self.locs = locs
        self.coord_scale = coord_scale
        self.component_logits = component_logits
        self.dim = locs.size(-1)
        if self.dim < 2:
            raise NotImplementedError('This distribution does not support D = 1')
        self.categorical = Categorical(logits=component_logits)
        self.probs = self.categorical.probs
        super(MixtureOfDiagNormalsSharedCovariance, self).__init__(batch_shape=batch_shape, event_shape=(self.dim,),
                                                                   validate_args=False)

    def log_prob(self, value):
        coord_scale = self.coord_scale.unsqueeze(-2) if self.batch_mode else self.coord_scale
        epsilon = (value.unsqueeze(-2) - self.locs) / coord_scale  # L B K D
        eps_sqr = 0.5 * torch.pow(epsilon, 2.0).sum(-1)  # L B K
        eps_sqr_min = torch.min(eps_sqr, -1)[0]  # L B
        result = self.categorical.logits + (-eps_sqr + eps_sqr_min.unsqueeze(-1))  # L B K
        result = torch.logsumexp(result, dim=-1)  # L B
        result = result - (0.5 * math.log(2.0 * math.pi) * float(self.dim))
        result = result - (torch.log(self.coord_scale).sum(-1))
        result = result - (eps_sqr_min)
        return result


class MixtureModel(torch.nn.Module):
    def __init__(self, K, D):
        super().__init__()
        self.locs = torch.nn.Parameter(torch.randn(K, D))
        self.log_coord_scale = torch.nn.Parameter(torch.zeros(D))
        self.component_logits = torch.nn.Parameter(torch.zeros(K))

    def distribution(self):
        return MixtureOfDiagNormalsSharedCovariance(self.locs, self.log_coord_scale.exp(), self.component_logits)


def fit(model, data, num_steps=5, lr=0.05):
    optim = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for step in range(num_steps):
        optim.zero_grad()
        loss = -model.distribution().log_prob(data).mean()
        loss.backward()
        optim.step()
        losses.append(loss.detach())
    return torch.stack(losses)


def main():
    data = torch.cat([torch.randn(40, 3) + 2.0, torch.randn(40, 3) - 2.0])
    model = MixtureModel(K=2, D=3)
    losses = fit(model, data)
    return losses, model.locs.detach().clone()


losses, locs = main()

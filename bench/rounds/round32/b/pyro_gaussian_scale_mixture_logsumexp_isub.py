# label: hazard raises
# why: in the same logsumexp commit GaussianScaleMixture.log_prob kept `result -= ...` after `result = torch.logsumexp(...)`; the subtraction overwrites the output that LogsumexpBackward saved, so differentiating the log density (e.g. fitting `component_scale`/`coord_scale` by maximum likelihood) raises.
# source: https://github.com/pyro-ppl/pyro/commit/a433671bedfa960d413fdff1851e3691b34cfcfb
import math

import torch
from torch.distributions import Categorical, Distribution, constraints

torch.manual_seed(0)


class GaussianScaleMixture(Distribution):
    """
    Mixture of zero-mean Normal distributions with diagonal covariance
    Sigma_ii = (component_scale_k * coord_scale_i) ** 2, mixture weights
    given by the softmax of `component_logits`.
    """
    has_rsample = True
    arg_constraints = {"component_scale": constraints.positive, "coord_scale": constraints.positive,
                       "component_logits": constraints.real}

    def __init__(self, coord_scale, component_logits, component_scale):
        self.dim = coord_scale.size(0)
        if self.dim < 2:
            raise NotImplementedError('This distribution does not support D = 1')
        assert(coord_scale.dim() == 1), "The coord_scale parameter in GaussianScaleMixture should be D dimensional"
        assert(component_scale.dim() == 1), \
            "The component_scale parameter in GaussianScaleMixture should be K dimensional"
        assert(component_logits.dim() == 1), \
            "The component_logits parameter in GaussianScaleMixture should be K dimensional"
        assert(component_logits.shape == component_scale.shape), \
            "The component_logits and component_scale parameters in GaussianScaleMixture should be K dimensional"
        self.coord_scale = coord_scale
        self.component_logits = component_logits
        self.component_scale = component_scale
        self.coeffs = self._compute_coeffs()
        self.categorical = Categorical(logits=component_logits)
        super(GaussianScaleMixture, self).__init__(event_shape=(self.dim,), validate_args=False)

    def _compute_coeffs(self):
        """
        These coefficients are used internally in the backward call.
        """
        dimov2 = int(self.dim / 2)  # this is correct for both even and odd dimensions
        coeffs = torch.ones(dimov2)
        for k in range(dimov2 - 1):
            coeffs[k + 1:] *= self.dim - 2 * (k + 1)
        return coeffs

    def log_prob(self, value):
        assert value.dim() == 1 and value.size(0) == self.dim
        epsilon_sqr = torch.pow(value / self.coord_scale, 2.0).sum()
        component_scale_log_power = self.component_scale.log() * -self.dim
        # logits in Categorical is already normalized
        result = torch.logsumexp(
            component_scale_log_power + self.categorical.logits +
            -0.5 * epsilon_sqr / torch.pow(self.component_scale, 2.0), dim=-1)  # K
        result -= 0.5 * math.log(2.0 * math.pi) * float(self.dim)  # <-- IPL001
        result -= self.coord_scale.log().sum()  # <-- IPL001
        return result


def main():
    log_coord_scale = torch.nn.Parameter(torch.zeros(4))
    component_logits = torch.nn.Parameter(torch.zeros(3))
    log_component_scale = torch.nn.Parameter(torch.tensor([-1.0, 0.0, 1.0]))
    optim = torch.optim.SGD([log_coord_scale, component_logits, log_component_scale], lr=0.01)

    data = torch.randn(16, 4) * 1.5
    optim.zero_grad()
    gsm = GaussianScaleMixture(log_coord_scale.exp(), component_logits, log_component_scale.exp())
    nll = -torch.stack([gsm.log_prob(x) for x in data]).mean()
    nll.backward()
    optim.step()
    return nll.detach(), log_component_scale.detach().clone()


nll, log_component_scale = main()

"""An ``__init__`` parameter that every construction passes an ``nn.Parameter`` for holds a
tensor that requires grad, in ``__init__`` and as the attribute it is stored on; and
``nn.Parameter(...)`` builds a tensor, not a module (round 32, Pyro's
MixtureOfDiagNormalsSharedCovariance: a module's parameters given to a plain distribution
class, whose ``log_prob`` subtracts in place from what ``logsumexp`` saved). The programs are
run with torch.
"""

from __future__ import annotations

from programs import behave, codes

MIXTURE = """
import math

import torch


class MixtureOfDiagNormals:
    def __init__(self, locs, component_logits):
        self.locs = locs
        self.component_logits = component_logits

    def log_prob(self, value):
        epsilon = value.unsqueeze(-2) - self.locs
        result = torch.log_softmax(self.component_logits, -1) - 0.5 * epsilon.pow(2).sum(-1)
        result = torch.logsumexp(result, dim=-1)
        {normalise}
        return result


class MixtureModel(torch.nn.Module):
    def __init__(self, K, D):
        super().__init__()
        self.locs = torch.nn.Parameter(torch.randn(K, D))
        self.component_logits = torch.nn.Parameter(torch.zeros(K))

    def distribution(self):
        return MixtureOfDiagNormals({locs}, self.component_logits)


torch.manual_seed(0)
model = MixtureModel(3, 2)
loss = -model.distribution().log_prob(torch.randn(8, 2)).mean()
loss.backward()
"""

IN_PLACE = "result -= 0.5 * math.log(2.0 * math.pi)"
OUT_OF_PLACE = "result = result - 0.5 * math.log(2.0 * math.pi)"


def test_parameters_given_at_construction_require_grad() -> None:
    hazard = MIXTURE.format(normalise=IN_PLACE, locs="self.locs")
    assert codes(hazard) == [(16, "IPL001")]
    safe = MIXTURE.format(normalise=OUT_OF_PLACE, locs="self.locs")
    assert codes(safe) == []
    behave(hazard, safe)


def test_a_detached_argument_is_not_a_parameter() -> None:
    # one construction's argument is no parameter: the attribute's grad is not known
    data = MIXTURE.format(normalise=IN_PLACE, locs="self.locs.detach()")
    data = data.replace("self.component_logits)", "self.component_logits.detach())")
    assert codes(data) == []

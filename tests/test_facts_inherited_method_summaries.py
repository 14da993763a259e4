"""What an inherited method writes, where it calls the subclass's override (piq's FID, round 35):

``BaseFeatureMetric.forward`` calls ``self.compute_metric(pred, targ)``; ``FID`` overrides
``compute_metric`` to compute statistics through ``_cov``, which centres its argument in place
(``m -= m.mean(...)``, through ``pred.detach()``). ``FID()(pred, targ)`` therefore centres the
caller's features, and the KID computed next from the same features is wrong. The call's
summary was looked up as ``FID.forward``, which only the base defines: the base's own reading
calls its own ``compute_metric``, which writes nothing. Now an inherited method that calls an
override through ``self`` is summarised as the subclass's. Centring out of place is clean. The
programs run with torch.
"""

from __future__ import annotations

from programs import codes, run

METRICS = """
import torch
from torch import nn


def _cov(m):
    {centre}
    return m.t().matmul(m) / (m.size(0) - 1)


class BaseFeatureMetric(nn.Module):
    def forward(self, predicted_features, target_features):
        return self.compute_metric(predicted_features, target_features)

    @staticmethod
    def compute_metric(predicted_features, target_features):
        raise NotImplementedError


class FID(BaseFeatureMetric):
    def compute_metric(self, predicted_features, target_features):
        s_pred = _cov(predicted_features.detach())
        s_targ = _cov(target_features.detach())
        return (s_pred - s_targ).pow(2).sum()


def main():
    torch.manual_seed(0)
    pred = torch.rand(16, 4)
    targ = torch.rand(16, 4)
    fid = FID()(pred, targ)
    kid = (pred @ targ.t() + 1).pow(3).mean()
    return fid, kid


fid, kid = main()
"""

IN_PLACE = "m -= torch.mean(m, dim=0, keepdim=True)"
OUT_OF_PLACE = "m = m - torch.mean(m, dim=0, keepdim=True)"


def test_the_inherited_forward_centres_the_callers_features() -> None:
    hazard = METRICS.format(centre=IN_PLACE)
    assert codes(hazard) == [(7, "IPL004")]
    safe = METRICS.format(centre=OUT_OF_PLACE)
    assert codes(safe) == []
    wrong, right = run(hazard), run(safe)
    assert float(wrong["fid"]) == float(right["fid"])
    assert abs(float(wrong["kid"]) - float(right["kid"])) > 1e-3  # the KID saw centred features

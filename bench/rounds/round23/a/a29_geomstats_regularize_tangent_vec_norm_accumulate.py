# label: hazard raises
# why: regularize_tangent_vec_at_identity adds the zero-mask into tangent_vec_canonical_norm in place although linalg.norm saved that output for its backward, and later adds it into coef after einsum saved coef, so backward through the regularized rotation vector raises.
# source: https://github.com/geomstats/geomstats/commit/e01b1f9a23b192d6ed352f5493c7331c132add37 ("regularize tangent_vec with no inplace ops", geomstats/geometry/special_orthogonal.py)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class InvariantMetric:
    def __init__(self, metric_mat_at_identity):
        self.metric_mat_at_identity = metric_mat_at_identity

    def norm(self, vector):
        sq_norm = torch.einsum('...i,ij,...j->...', vector, self.metric_mat_at_identity, vector)
        return torch.sqrt(sq_norm)


class _SpecialOrthogonal3Vectors:
    def __init__(self, epsilon=0.):
        self.epsilon = epsilon

    def regularize(self, point):
        theta = torch.linalg.norm(point, dim=-1)
        k = torch.floor(theta / 2. / math.pi)
        angle = theta - 2 * k * math.pi
        theta_eps = torch.where(torch.isclose(theta, torch.zeros_like(theta)), torch.ones_like(theta), theta)
        normalized_angle = torch.where(angle <= math.pi, angle, 2 * math.pi - angle)
        norm_ratio = torch.where(torch.isclose(theta, torch.zeros_like(theta)), torch.ones_like(theta), normalized_angle / theta_eps)
        norm_ratio = torch.where(angle > math.pi, -norm_ratio, norm_ratio)
        return torch.einsum('...,...i->...i', norm_ratio, point)

    def regularize_tangent_vec_at_identity(self, tangent_vec, metric):
        tangent_vec_metric_norm = metric.norm(tangent_vec)
        tangent_vec_canonical_norm = torch.linalg.norm(tangent_vec, dim=-1)

        mask_norm_0 = torch.isclose(tangent_vec_metric_norm, torch.zeros_like(tangent_vec_metric_norm))
        mask_canonical_norm_0 = torch.isclose(tangent_vec_canonical_norm, torch.zeros_like(tangent_vec_canonical_norm))

        mask_0 = mask_norm_0 | mask_canonical_norm_0
        mask_else = ~mask_0

        # This avoids division by 0.
        mask_0_float = mask_0.to(torch.float32) + self.epsilon
        mask_else_float = mask_else.to(torch.float32) + self.epsilon

        regularized_vec = torch.zeros_like(tangent_vec)
        regularized_vec += torch.einsum('...,...i->...i', mask_0_float, tangent_vec)

        tangent_vec_canonical_norm += mask_0_float  # <-- IPL001

        coef = torch.zeros_like(tangent_vec_metric_norm)
        coef += mask_else_float * (tangent_vec_metric_norm / tangent_vec_canonical_norm)

        coef_tangent_vec = torch.einsum('...,...i->...i', coef, tangent_vec)
        regularized_vec += torch.einsum('...,...i->...i', mask_else_float, self.regularize(coef_tangent_vec))

        coef += mask_0_float  # <-- IPL001
        regularized_vec = torch.einsum('...,...i->...i', 1. / coef, regularized_vec)
        regularized_vec = torch.einsum('...,...i->...i', mask_else_float, regularized_vec)
        return regularized_vec


def main():
    so3 = _SpecialOrthogonal3Vectors()
    metric = InvariantMetric(torch.diag(torch.tensor([1.0, 2.0, 0.5])))
    head = nn.Linear(8, 3)
    feats = torch.randn(5, 8)
    tangent_vec = head(feats) * 3.0
    reg = so3.regularize_tangent_vec_at_identity(tangent_vec, metric)
    loss = (reg ** 2).sum()
    loss.backward()
    return loss.detach(), head.weight.grad


loss, grad = main()

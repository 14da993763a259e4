# label: safe
# why: after the fix contract() receives positions.mean.clone(), so its in-place x[mask] = ... only rewrites the copy and the Jacobian and mask are evaluated at the original sample means; the covariance update also goes into a clone.
# source: https://github.com/nerfstudio-project/nerfstudio/commit/b2fc6ae1edd64700e88e6bdb07fac7bae6eff934 (post-fix SceneContraction, PR #71)
from dataclasses import dataclass

import torch
from torch import nn
from torch.func import jacrev, vmap

torch.manual_seed(0)


@dataclass
class Gaussians:
    mean: torch.Tensor
    cov: torch.Tensor


class SpatialDistortion(nn.Module):
    """Apply spatial distortions"""


class SceneContraction(SpatialDistortion):
    def forward(self, positions):
        def contract(x):
            mag = x.norm(dim=-1)
            mask = mag >= 1
            x[mask] = (2 - (1 / mag[mask][..., None])) * (x[mask] / mag[mask][..., None])
            return x

        if isinstance(positions, Gaussians):
            means = contract(positions.mean.clone())

            contract = lambda x: (2 - (1 / x.norm(dim=-1, keepdim=True))) * (x / x.norm(dim=-1, keepdim=True))
            jc_means = vmap(jacrev(contract))(positions.mean)

            # Only update covariances on positions outside the unit sphere
            mag = positions.mean.norm(dim=-1)
            mask = mag >= 1
            cov = positions.cov.clone()
            cov[mask] = jc_means[mask] @ positions.cov[mask] @ torch.transpose(jc_means[mask], -2, -1)

            return Gaussians(mean=means, cov=cov)

        return contract(positions)


def conical_frustum_to_gaussian(origins, directions, starts, ends, radius):
    t_mean = (starts + ends) / 2.0
    mean = origins[:, None, :] + directions[:, None, :] * t_mean
    d_outer = directions[:, :, None] * directions[:, None, :]
    r2 = (radius * t_mean) ** 2
    eye = torch.eye(3)
    cov = ((ends - starts) ** 2 / 12.0)[..., None] * d_outer[:, None] + r2[..., None] * (eye - d_outer[:, None])
    return Gaussians(mean=mean.reshape(-1, 3), cov=cov.reshape(-1, 3, 3))


def main():
    origins = torch.zeros(4, 3)
    directions = nn.functional.normalize(torch.randn(4, 3), dim=-1)
    bins = torch.linspace(0.2, 4.0, 6)
    starts, ends = bins[:-1].expand(4, -1)[..., None], bins[1:].expand(4, -1)[..., None]
    gaussians = conical_frustum_to_gaussian(origins, directions, starts, ends, radius=0.01)
    contracted = SceneContraction()(gaussians)
    encoder = nn.Linear(3 + 9, 4)
    feats = encoder(torch.cat([contracted.mean, contracted.cov.flatten(-2)], dim=-1))
    feats.pow(2).mean().backward()
    return contracted.mean, contracted.cov, encoder.weight.grad


mean, cov, grad = main()

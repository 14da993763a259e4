# label: safe
# why: The fix passes positions.mean.clone() to contract, so the in-place x[mask] = ... inside contract only touches a private copy; the caller's Gaussians.mean stays intact for the Jacobian and mask computations (positions carry no grad here).
# source: https://github.com/nerfstudio-project/nerfstudio/pull/71
from dataclasses import dataclass

import torch
from torch import nn
from torch.func import jacrev, vmap


@dataclass
class Gaussians:
    """Stores Gaussians

    Args:
        mean: Mean of multivariate Gaussian
        cov: Covariance of multivariate Gaussian.
    """

    mean: torch.Tensor
    cov: torch.Tensor


def compute_3d_gaussian(directions, means, dir_variance, radius_variance):
    """Compute guassian along ray."""
    dir_outer_product = directions[..., :, None] * directions[..., None, :]
    eye = torch.eye(directions.shape[-1], device=directions.device)
    dir_mag_sq = torch.clamp(torch.sum(directions**2, dim=-1, keepdim=True), min=1e-10)
    null_outer_product = eye - directions[..., :, None] * (directions / dir_mag_sq)[..., None, :]
    dir_cov_diag = dir_variance[..., None] * dir_outer_product[..., :, :]
    radius_cov_diag = radius_variance[..., None] * null_outer_product[..., :, :]
    cov = dir_cov_diag + radius_cov_diag
    return Gaussians(mean=means, cov=cov)


@dataclass
class Frustums:
    """Describes region of space as a frustum."""

    origins: torch.Tensor
    directions: torch.Tensor
    frustum_starts: torch.Tensor
    frustum_ends: torch.Tensor
    pixel_area: torch.Tensor

    def get_gaussian_blob(self) -> Gaussians:
        """Calculates guassian approximation of conical frustum."""
        mu = (self.frustum_starts + self.frustum_ends) / 2.0
        hw = (self.frustum_ends - self.frustum_starts) / 2.0
        means = self.origins + self.directions * mu
        dir_variance = (hw**2) / 3
        radius = torch.sqrt(self.pixel_area / torch.pi)
        radius_variance = radius**2 * (mu**2 / 4)
        return compute_3d_gaussian(self.directions, means, dir_variance, radius_variance)


class SpatialDistortion(nn.Module):
    """Apply spatial distortions"""


class SceneContraction(SpatialDistortion):
    """Contract unbounded space into a sphere of radius 2 (mip-NeRF 360)."""

    def forward(self, positions):
        def contract(x):
            mag = x.norm(dim=-1)
            mask = mag >= 1
            x[mask] = (2 - (1 / mag[mask][..., None])) * (x[mask] / mag[mask][..., None])

            return x

        if isinstance(positions, Gaussians):
            means = contract(positions.mean.clone())

            contract = lambda x: (2 - (1 / x.norm(dim=-1, keepdim=True))) * (x / x.norm(dim=-1, keepdim=True))
            jc_means = vmap(jacrev(contract))(positions.mean.view(-1, positions.mean.shape[-1]))
            jc_means = jc_means.view(list(positions.mean.shape) + [positions.mean.shape[-1]])

            # Only update covariances on positions outside the unit sphere
            mag = positions.mean.norm(dim=-1)
            mask = mag >= 1
            cov = positions.cov.clone()
            cov[mask] = jc_means[mask] @ positions.cov[mask] @ torch.transpose(jc_means[mask], -2, -1)

            return Gaussians(mean=means, cov=cov)

        return contract(positions)


class MipField(nn.Module):
    """Tiny field: integrated encoding of the contracted Gaussians -> density."""

    def __init__(self):
        super().__init__()
        self.spatial_distortion = SceneContraction()
        self.mlp = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, frustums):
        gaussians = frustums.get_gaussian_blob()
        gaussians = self.spatial_distortion(gaussians)
        var = torch.diagonal(gaussians.cov, dim1=-2, dim2=-1)
        encoded = torch.cat([torch.sin(gaussians.mean) * torch.exp(-0.5 * var), gaussians.mean], dim=-1)
        return self.mlp(encoded), gaussians


def main():
    torch.manual_seed(0)
    num_rays, num_samples = 4, 6
    origins = torch.randn(num_rays, 1, 3) * 0.3
    directions = nn.functional.normalize(torch.randn(num_rays, 1, 3), dim=-1).expand(num_rays, num_samples, 3)
    bins = torch.linspace(0.1, 4.0, num_samples + 1)
    frustums = Frustums(
        origins=origins.expand(num_rays, num_samples, 3),
        directions=directions,
        frustum_starts=bins[:-1].view(1, -1, 1).expand(num_rays, num_samples, 1),
        frustum_ends=bins[1:].view(1, -1, 1).expand(num_rays, num_samples, 1),
        pixel_area=torch.full((num_rays, num_samples, 1), 1e-3),
    )
    field = MipField()
    density, gaussians = field(frustums)
    loss = density.pow(2).mean()
    loss.backward()
    print('loss', loss.item())
    return density, gaussians.mean, gaussians.cov, field.mlp[0].weight.grad


density, contracted_mean, contracted_cov, mlp_grad = main()

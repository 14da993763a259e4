# label: hazard raises
# why: In nerfacc 0.5, render_transmittance_from_density computes `trans = torch.exp(-exclusive_sum(sigmas_dt, packed_info))` and then applies the carried-over transmittance with `trans *= prefix_trans`; ExpBackward saved its output `trans`, so rendering a ray in several sample chunks and back-propagating the photometric loss raises (commit "minor fix for prefix_trans").
# source: https://github.com/nerfstudio-project/nerfacc/commit/82baf33d19f775a53a1b4bdb8fd47ed26a8a343c
from typing import Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor


def pack_info(ray_indices: Tensor, n_rays: Optional[int] = None) -> Tensor:
    raise NotImplementedError("Only support cuda inputs.")


def exclusive_sum(inputs: Tensor, packed_info: Optional[Tensor] = None) -> Tensor:
    if packed_info is None:
        # Batched exclusive sum on the last dimension.
        outputs = torch.cumsum(
            torch.cat(
                [torch.zeros_like(inputs[..., :1]), inputs[..., :-1]], dim=-1
            ),
            dim=-1,
        )
    else:
        raise NotImplementedError("flattened inputs need the CUDA kernels")
    return outputs


def render_transmittance_from_density(
    t_starts: Tensor,
    t_ends: Tensor,
    sigmas: Tensor,
    packed_info: Optional[Tensor] = None,
    ray_indices: Optional[Tensor] = None,
    n_rays: Optional[int] = None,
    prefix_trans: Optional[Tensor] = None,
) -> Tuple[Tensor, Tensor]:
    if ray_indices is not None and packed_info is None:
        packed_info = pack_info(ray_indices, n_rays)

    sigmas_dt = sigmas * (t_ends - t_starts)
    alphas = 1.0 - torch.exp(-sigmas_dt)
    trans = torch.exp(-exclusive_sum(sigmas_dt, packed_info))
    if prefix_trans is not None:
        trans *= prefix_trans  # <-- IPL001
    return trans, alphas


def render_weight_from_density(
    t_starts: Tensor,
    t_ends: Tensor,
    sigmas: Tensor,
    packed_info: Optional[Tensor] = None,
    ray_indices: Optional[Tensor] = None,
    n_rays: Optional[int] = None,
    prefix_trans: Optional[Tensor] = None,
) -> Tuple[Tensor, Tensor, Tensor]:
    trans, alphas = render_transmittance_from_density(
        t_starts, t_ends, sigmas, packed_info, ray_indices, n_rays, prefix_trans
    )
    weights = trans * alphas
    return weights, trans, alphas


def accumulate_along_rays(weights: Tensor, values: Optional[Tensor] = None) -> Tensor:
    if values is None:
        src = weights[..., None]
    else:
        src = weights[..., None] * values
    return torch.sum(src, dim=-2)


class NGPRadianceField(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.mlp_base = nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, hidden + 1))
        self.mlp_head = nn.Sequential(nn.Linear(hidden + 3, hidden), nn.ReLU(), nn.Linear(hidden, 3))

    def forward(self, positions, directions):
        h = self.mlp_base(positions)
        density = torch.nn.functional.softplus(h[..., 0])
        rgb = torch.sigmoid(self.mlp_head(torch.cat([h[..., 1:], directions], dim=-1)))
        return rgb, density


def render_image_with_chunked_samples(radiance_field, rays_o, rays_d, t_vals, chunk):
    colors = 0.0
    opacities = 0.0
    depths = 0.0
    prefix_trans = None
    for start in range(0, t_vals.shape[-1] - 1, chunk):
        t_starts = t_vals[:, start:start + chunk]
        t_ends = t_vals[:, start + 1:start + chunk + 1]
        t_starts = t_starts[:, :t_ends.shape[-1]]
        t_mid = (t_starts + t_ends) / 2.0
        positions = rays_o[:, None] + rays_d[:, None] * t_mid[..., None]
        directions = rays_d[:, None].expand_as(positions)
        rgbs, sigmas = radiance_field(positions, directions)
        weights, trans, alphas = render_weight_from_density(t_starts, t_ends, sigmas, prefix_trans=prefix_trans)
        colors = colors + accumulate_along_rays(weights, values=rgbs)
        opacities = opacities + accumulate_along_rays(weights)
        depths = depths + accumulate_along_rays(weights, values=t_mid[..., None])
        prefix_trans = trans[:, -1:] * (1.0 - alphas[:, -1:])
    return colors, opacities, depths


def main():
    torch.manual_seed(0)
    radiance_field = NGPRadianceField()
    rays_o = torch.randn(16, 3) * 0.1
    rays_d = nn.functional.normalize(torch.randn(16, 3), dim=-1)
    t_vals = torch.linspace(0.05, 2.0, 17).expand(16, 17)
    pixels = torch.rand(16, 3)
    colors, opacities, depths = render_image_with_chunked_samples(radiance_field, rays_o, rays_d, t_vals, chunk=4)
    colors = colors + 1.0 * (1.0 - opacities)
    loss = nn.functional.smooth_l1_loss(colors, pixels)
    loss.backward()
    return loss, colors, depths, radiance_field


loss, colors, depths, radiance_field = main()
print(float(loss))

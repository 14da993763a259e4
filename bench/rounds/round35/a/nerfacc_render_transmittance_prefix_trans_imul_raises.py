# label: hazard raises
# why: nerfacc's render_transmittance_from_alpha scales the transmittance of a later chunk of samples by the transmittance carried over from the previous chunk with `trans *= prefix_trans`; on the batched path `trans` is the output of torch.cumprod, which CumprodBackward saved, so chunked volume rendering raises at backward (commit "Fix inplace prefix_trans").
# source: https://github.com/nerfstudio-project/nerfacc/commit/5cea4feb82058326c70f938069907513b2324821
import types
from typing import Callable, Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor

# the CUDA build ships CUB, so batched (n_rays, n_samples) inputs never need packed_info
_C = types.SimpleNamespace(is_cub_available=lambda: True)


def is_cub_available() -> bool:
    return _C.is_cub_available()


def pack_info(ray_indices: Tensor, n_rays: Optional[int] = None) -> Tensor:
    assert ray_indices.dim() == 1, "ray_indices must be a 1D tensor with shape (n_samples)."
    raise NotImplementedError("Only support cuda inputs.")


def exclusive_prod(inputs: Tensor, packed_info: Optional[Tensor] = None,
                   indices: Optional[Tensor] = None) -> Tensor:
    if indices is not None and packed_info is not None:
        raise ValueError("Only one of `indices` and `packed_info` can be specified.")
    if indices is None and packed_info is None:
        # Batched exclusive product on the last dimension.
        outputs = torch.cumprod(
            torch.cat(
                [torch.ones_like(inputs[..., :1]), inputs[..., :-1]], dim=-1
            ),
            dim=-1,
        )
    return outputs


def render_transmittance_from_alpha(
    alphas: Tensor,
    packed_info: Optional[Tensor] = None,
    ray_indices: Optional[Tensor] = None,
    n_rays: Optional[int] = None,
    prefix_trans: Optional[Tensor] = None,
) -> Tensor:
    if not is_cub_available() and packed_info is None:
        # Convert ray indices to packed info
        packed_info = pack_info(ray_indices, n_rays)
        ray_indices = None

    trans = exclusive_prod(
        1 - alphas, packed_info=packed_info, indices=ray_indices
    )
    if prefix_trans is not None:
        trans *= prefix_trans  # <-- IPL001
    return trans


def render_weight_from_alpha(
    alphas: Tensor,
    packed_info: Optional[Tensor] = None,
    ray_indices: Optional[Tensor] = None,
    n_rays: Optional[int] = None,
    prefix_trans: Optional[Tensor] = None,
) -> Tuple[Tensor, Tensor]:
    trans = render_transmittance_from_alpha(
        alphas, packed_info, ray_indices, n_rays, prefix_trans
    )
    weights = trans * alphas
    return weights, trans


def accumulate_along_rays(weights: Tensor, values: Optional[Tensor] = None,
                          ray_indices: Optional[Tensor] = None, n_rays: Optional[int] = None) -> Tensor:
    if values is None:
        src = weights[..., None]
    else:
        assert values.dim() == weights.dim() + 1
        assert weights.shape == values.shape[:-1]
        src = weights[..., None] * values
    return torch.sum(src, dim=-2)


class RadianceField(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, 4))

    def forward(self, positions):
        out = self.mlp(positions)
        return torch.sigmoid(out[..., :3]), torch.sigmoid(out[..., 3])


def render_in_chunks(radiance_field: Callable, rays_o: Tensor, rays_d: Tensor, t_vals: Tensor, chunk: int):
    """Render the samples of each ray chunk by chunk, carrying the transmittance between chunks."""
    n_rays = rays_o.shape[0]
    colors = torch.zeros(n_rays, 3)
    opacities = torch.zeros(n_rays, 1)
    prefix_trans = None
    for start in range(0, t_vals.shape[-1], chunk):
        t_chunk = t_vals[:, start:start + chunk]
        positions = rays_o[:, None] + rays_d[:, None] * t_chunk[..., None]
        rgbs, alphas = radiance_field(positions)
        weights, trans = render_weight_from_alpha(alphas, prefix_trans=prefix_trans)
        colors = colors + accumulate_along_rays(weights, values=rgbs)
        opacities = opacities + accumulate_along_rays(weights)
        prefix_trans = (trans[:, -1:] * (1 - alphas[:, -1:]))
    return colors, opacities


def main():
    torch.manual_seed(0)
    radiance_field = RadianceField()
    rays_o = torch.randn(8, 3) * 0.1
    rays_d = nn.functional.normalize(torch.randn(8, 3), dim=-1)
    t_vals = torch.linspace(0.1, 2.0, 12).expand(8, 12)
    target = torch.rand(8, 3)
    colors, opacities = render_in_chunks(radiance_field, rays_o, rays_d, t_vals, chunk=4)
    render_bkgd = torch.ones(3)
    colors = colors + render_bkgd * (1.0 - opacities)
    loss = ((colors - target) ** 2).mean()
    loss.backward()
    return loss, colors, radiance_field


loss, colors, radiance_field = main()
print(float(loss))

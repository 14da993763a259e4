# label: safe
# why: after the fix each scaling-and-squaring step rebinds ddf = ddf + warp(ddf), leaving the tensor grid_sample saved intact; normalize_grid still writes grid[..., i] in place, but that grid is a fresh sum whose multiply-by-constant saved nothing.
# source: https://github.com/Project-MONAI/MONAI/commit/ad981e9779f70ab086ed75643ee58fbdb6912fc5
from typing import List

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


class Warp(nn.Module):
    """
    Warp an image with given DDF.
    """

    def __init__(self, spatial_dims: int, mode: int = 1, padding_mode: str = "zeros"):
        super(Warp, self).__init__()
        if spatial_dims not in [2, 3]:
            raise ValueError(f"got unsupported spatial_dims={spatial_dims}, only support 2-d and 3-d input")
        self.spatial_dims = spatial_dims
        self.mode = mode
        self.padding_mode = padding_mode

    @staticmethod
    def get_reference_grid(ddf: torch.Tensor) -> torch.Tensor:
        mesh_points = [torch.arange(0, dim) for dim in ddf.shape[2:]]
        grid = torch.stack(torch.meshgrid(*mesh_points, indexing="ij"), dim=0)  # (spatial_dims, ...)
        grid = torch.stack([grid] * ddf.shape[0], dim=0)  # (batch, spatial_dims, ...)
        grid = grid.to(ddf)
        return grid

    @staticmethod
    def normalize_grid(grid: torch.Tensor) -> torch.Tensor:
        # (batch, ..., self.spatial_dims)
        for i, dim in enumerate(grid.shape[1:-1]):
            grid[..., i] = grid[..., i] * 2 / (dim - 1) - 1
        return grid

    def forward(self, image: torch.Tensor, ddf: torch.Tensor) -> torch.Tensor:
        grid = self.get_reference_grid(ddf) + ddf
        grid = grid.permute([0] + list(range(2, 2 + self.spatial_dims)) + [1])  # (batch, ..., self.spatial_dims)
        grid = self.normalize_grid(grid)
        index_ordering: List[int] = list(range(self.spatial_dims - 1, -1, -1))
        grid = grid[..., index_ordering]  # z, y, x -> x, y, z
        _interp_mode = "bilinear" if self.mode == 1 else "nearest"
        warped_image = F.grid_sample(
            image, grid, mode=_interp_mode, padding_mode=self.padding_mode, align_corners=True
        )
        return warped_image


class DVF2DDF(nn.Module):
    """
    Layer calculates DVF from DDF with scaling and squaring.
    Adapted from:
        DeepReg (https://github.com/DeepRegNet/DeepReg)
    """

    def __init__(self, spatial_dims: int, num_steps: int = 7, mode: int = 1, padding_mode: str = "zeros"):
        super(DVF2DDF, self).__init__()
        if num_steps <= 0:
            raise ValueError(f"expecting positive num_steps, got {num_steps}")
        self.num_steps = num_steps
        self.warp_layer = Warp(spatial_dims=spatial_dims, mode=mode, padding_mode=padding_mode)

    def forward(self, dvf):
        """
        Args:
            dvf: dvf to be transformed, in shape (batch, ``spatial_dims``, H, W[,D])
        """
        ddf: torch.Tensor = dvf / (2 ** self.num_steps)
        for _ in range(self.num_steps):
            ddf = ddf + self.warp_layer(image=ddf, ddf=ddf)
        return ddf


def main():
    network = nn.Conv2d(in_channels=2, out_channels=2, kernel_size=3, padding=1)
    dvf2ddf = DVF2DDF(spatial_dims=2, num_steps=3)
    warp = Warp(spatial_dims=2)
    moving = torch.rand(1, 1, 6, 6)
    fixed = torch.rand(1, 1, 6, 6)
    x = network(torch.cat([moving, fixed], dim=1))
    ddf = dvf2ddf(x)
    warped = warp(moving, ddf)
    loss = F.mse_loss(warped, fixed) + 0.01 * ddf.pow(2).mean()
    loss.backward()
    return loss.detach(), ddf.detach(), network.weight.grad


loss, ddf, weight_grad = main()

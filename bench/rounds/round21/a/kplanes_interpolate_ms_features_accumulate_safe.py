# label: safe
# why: interpolate_ms_features starts multi_scale_interp from torch.zeros_like(...) and accumulates each scale with +=; neither the zeros buffer nor the running sum is saved by any backward node (the plane products saved their factors), so the in-place accumulation is harmless.
# source: https://github.com/Giodiro/plenoxels/commit/bb1821b708eba54360ddca8ad1ca159691309bc2 (pre-change code of LowrankModel.interpolate_ms_features)
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def grid_sample_wrapper(grid, coords, align_corners=True):
    grid_dim = coords.shape[-1]
    if grid.dim() == grid_dim + 1:
        grid = grid.unsqueeze(0)
    if coords.dim() == 2:
        coords = coords.unsqueeze(0)
    B, feature_dim = grid.shape[:2]
    n = coords.shape[-2]
    coords = coords.view([B] + [1] * (grid_dim - 1) + list(coords.shape[1:]))
    interp = F.grid_sample(grid, coords, align_corners=align_corners, mode='bilinear', padding_mode='border')
    interp = interp.view(B, feature_dim, n).transpose(-1, -2)
    return interp.squeeze()


class LowrankModel(nn.Module):
    def __init__(self, feature_dim=4, resolutions=(8, 16)):
        super().__init__()
        self.feature_dim = feature_dim
        self.grid_info = {"grid_dimensions": 2, "input_coordinate_dim": 3}
        self.grids = nn.ModuleList()
        for res in resolutions:
            planes = nn.ParameterList([
                nn.Parameter(torch.empty(1, feature_dim, res, res).uniform_(0.1, 0.5))
                for _ in range(3)
            ])
            self.grids.append(planes)
        self.sigma_net = nn.Sequential(nn.Linear(feature_dim, 16), nn.ReLU(), nn.Linear(16, 4))

    @staticmethod
    def interpolate_ms_features(pts, ms_grids, grid_info, feature_dim):
        coo_combs = list(itertools.combinations(
            range(pts.shape[-1]),
            grid_info.get("grid_dimensions", grid_info["input_coordinate_dim"]))
        )
        multi_scale_interp = torch.zeros(pts.shape[0], feature_dim)
        for scale_id, grid in enumerate(ms_grids):
            interp_space = torch.ones(pts.shape[0], feature_dim)  # [n, F_dim]
            for ci, coo_comb in enumerate(coo_combs):
                # interpolate in plane
                interp_out_plane = (
                    grid_sample_wrapper(grid[ci], pts[..., coo_comb])
                    .view(-1, feature_dim)
                )
                # compute product
                interp_space = interp_space * interp_out_plane
            # sum over scales
            multi_scale_interp += interp_space
        return multi_scale_interp

    def forward(self, pts):
        features = self.interpolate_ms_features(pts, self.grids, self.grid_info, self.feature_dim)
        return self.sigma_net(features)


def main():
    model = LowrankModel()
    pts = torch.rand(64, 3) * 2 - 1
    target = torch.rand(64, 4)
    out = model(pts)
    loss = F.mse_loss(out, target)
    loss.backward()
    return out.detach(), model.grids[0][0].grad, model.grids[1][2].grad


rgb_sigma, plane_grad_coarse, plane_grad_fine = main()

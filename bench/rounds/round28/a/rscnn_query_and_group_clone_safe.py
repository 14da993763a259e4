# label: safe
# why: the fixed grouper keeps raw_grouped_xyz as a clone, so the in-place centroid subtraction only rewrites grouped_xyz (whose producer, gather, does not need its own output) and the absolute coordinates survive.
# source: https://github.com/Yochengliu/Relation-Shape-CNN/issues/23
from typing import Tuple

import torch
import torch.nn as nn

torch.manual_seed(0)


def ball_query(radius, nsample, xyz, new_xyz, fps_idx):
    # nearest-neighbour stand-in for the CUDA ball query; returns (B, npoint, nsample) indices
    with torch.no_grad():
        dist = torch.cdist(new_xyz, xyz)
        idx = dist.topk(nsample - 1, dim=-1, largest=False).indices
    return torch.cat([fps_idx.unsqueeze(2), idx], dim=2)


def grouping_operation(features, idx):
    # features (B, C, N), idx (B, npoint, nsample) -> (B, C, npoint, nsample)
    B, C, N = features.shape
    _, npoint, nsample = idx.shape
    flat = idx.reshape(B, 1, npoint * nsample).expand(B, C, npoint * nsample)
    return torch.gather(features, 2, flat).reshape(B, C, npoint, nsample)


class QueryAndGroup(nn.Module):
    def __init__(self, radius: float, nsample: int, use_xyz: bool = True):
        super().__init__()
        self.radius, self.nsample, self.use_xyz = radius, nsample, use_xyz

    def forward(
            self,
            xyz: torch.Tensor,
            new_xyz: torch.Tensor,
            features: torch.Tensor = None,
            fps_idx: torch.Tensor = None
    ) -> Tuple[torch.Tensor]:
        idx = ball_query(self.radius, self.nsample, xyz, new_xyz, fps_idx)
        xyz_trans = xyz.transpose(1, 2).contiguous()
        grouped_xyz = grouping_operation(
            xyz_trans, idx
        )  # (B, 3, npoint, nsample)
        raw_grouped_xyz = grouped_xyz.clone()
        grouped_xyz -= new_xyz.transpose(1, 2).unsqueeze(-1)

        if features is not None:
            grouped_features = grouping_operation(features, idx)
            if self.use_xyz:
                new_features = torch.cat([raw_grouped_xyz, grouped_xyz, grouped_features],
                                         dim=1)  # (B, C + 3 + 3, npoint, nsample)
            else:
                new_features = grouped_features
        else:
            assert self.use_xyz, "Cannot have not features and not use xyz as a feature!"
            new_features = torch.cat([raw_grouped_xyz, grouped_xyz], dim=1)

        return new_features


def main():
    B, N, npoint, C = 2, 32, 8, 4
    xyz = torch.rand(B, N, 3, requires_grad=True)
    features = torch.randn(B, C, N, requires_grad=True)
    fps_idx = torch.arange(npoint).unsqueeze(0).repeat(B, 1)
    new_xyz = xyz[:, :npoint].detach().contiguous()
    grouper = QueryAndGroup(radius=0.2, nsample=6)
    mlp = nn.Conv2d(3 + 3 + C, 16, 1)
    new_features = grouper(xyz, new_xyz, features, fps_idx)
    out = mlp(new_features).max(dim=-1)[0]
    out.sum().backward()
    return new_features.detach(), xyz.grad


new_features, xyz_grad = main()

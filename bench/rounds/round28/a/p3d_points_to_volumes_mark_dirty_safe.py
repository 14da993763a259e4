# label: safe no-twin
# why: the custom Function splats point features into volume_densities/volume_features in place but declares it with ctx.mark_dirty and returns the dirtied tensors, so autograd rebases their history and the backward receives the right gradients.
# source: https://github.com/facebookresearch/pytorch3d/blob/main/pytorch3d/ops/points_to_volumes.py (_points_to_volumes_function; see commit 7d8b029aaed5f247e3898f4b51e6a79ca52bfc54)
import torch
from torch.autograd import Function

torch.manual_seed(0)


def _voxel_index(points_3d, grid_sizes, align_corners):
    # nearest voxel of each point for a (D, H, W) grid in [-1, 1] local coordinates
    D, H, W = [int(s) for s in grid_sizes[0]]
    scale = torch.tensor([W - 1, H - 1, D - 1], dtype=points_3d.dtype) if align_corners else \
        torch.tensor([W, H, D], dtype=points_3d.dtype)
    if align_corners:
        coords = (points_3d + 1) * 0.5 * scale
    else:
        coords = ((points_3d + 1) * scale - 1) * 0.5
    coords = coords.round().long()
    x = coords[..., 0].clamp(0, W - 1)
    y = coords[..., 1].clamp(0, H - 1)
    z = coords[..., 2].clamp(0, D - 1)
    return (z * H + y) * W + x


class _points_to_volumes_function(Function):
    @staticmethod
    def forward(
        ctx,
        points_3d,
        points_features,
        volume_densities,
        volume_features,
        grid_sizes,
        point_weight,
        mask,
        align_corners,
        splat,
    ):
        ctx.mark_dirty(volume_densities, volume_features)

        N, P, D = points_3d.shape
        if D != 3:
            raise ValueError("points_3d must be 3D")
        idx = _voxel_index(points_3d, grid_sizes, align_corners)  # (N, P)
        w = point_weight * mask  # (N, P)
        C = points_features.shape[2]
        dens = volume_densities.view(N, 1, -1)
        feats = volume_features.view(N, C, -1)
        for b in range(N):
            dens[b, 0].index_add_(0, idx[b], w[b])
            feats[b].index_add_(1, idx[b], (points_features[b] * w[b, :, None]).t())
        ctx.save_for_backward(idx, mask)
        ctx.point_weight = point_weight
        return volume_densities, volume_features

    @staticmethod
    def backward(ctx, grad_volume_densities, grad_volume_features):
        idx, mask = ctx.saved_tensors
        N, C = grad_volume_features.shape[:2]
        g = grad_volume_features.reshape(N, C, -1)
        grad_points_features = torch.stack(
            [g[b][:, idx[b]].t() for b in range(N)]
        ) * (ctx.point_weight * mask)[..., None]
        return (
            None,
            grad_points_features,
            grad_volume_densities,
            grad_volume_features,
            None, None, None, None, None,
        )


_points_to_volumes = _points_to_volumes_function.apply


def add_points_features_to_volume_densities_features(points_3d, points_features, volume_densities, volume_features, grid_sizes, point_weight=1.0, mask=None, align_corners=True, splat=False):
    if mask is None:
        mask = points_3d.new_ones(points_3d.shape[:2])
    return _points_to_volumes(points_3d, points_features, volume_densities, volume_features, grid_sizes, point_weight, mask, align_corners, splat)


def main():
    N, P, C, S = 2, 50, 4, 5
    points_3d = torch.rand(N, P, 3) * 2 - 1
    feature_net = torch.nn.Linear(3, C)
    points_features = feature_net(points_3d)
    init_densities = torch.zeros(N, 1, S, S, S, requires_grad=True)
    init_features = torch.zeros(N, C, S, S, S, requires_grad=True)
    volume_densities = init_densities * 1.0
    volume_features = init_features * 1.0
    grid_sizes = torch.LongTensor([[S, S, S]] * N)
    volume_densities, volume_features = add_points_features_to_volume_densities_features(
        points_3d, points_features, volume_densities, volume_features, grid_sizes)
    loss = (volume_features.tanh() * torch.sigmoid(volume_densities)).sum()
    loss.backward()
    return volume_features.detach(), feature_net.weight.grad, init_densities.grad


volume_features, weight_grad, densities_grad = main()

# label: hazard raises
# why: project_gaussians_forward zeroes culled gaussians with cov3d[~mask] = 0 and cov2d[~mask] = 0, but cov3d was saved by the einsum in project_cov3d_ewa and cov2d by the determinant products in compute_cov2d_bounds, so backward finds them at a newer version.
# source: https://github.com/nerfstudio-project/gsplat/commit/bb69eeefacf7a05c95c3c24db48fc4e361858cea
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def quat_to_rotmat(quat):
    w, x, y, z = torch.unbind(F.normalize(quat, dim=-1), dim=-1)
    mat = torch.stack(
        [
            1 - 2 * (y**2 + z**2), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x**2 + z**2), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x**2 + y**2),
        ],
        dim=-1,
    )
    return mat.reshape(quat.shape[:-1] + (3, 3))


def scale_rot_to_cov3d(scale, glob_scale, quat):
    R = quat_to_rotmat(quat)
    M = R * glob_scale * scale[..., None, :]
    return M @ M.transpose(-1, -2)


def project_cov3d_ewa(mean3d, cov3d, viewmat, fx, fy):
    W = viewmat[..., :3, :3]
    p = viewmat[..., :3, 3]
    t = torch.einsum("...ij,...j->...i", W, mean3d) + p
    rz = 1.0 / t[..., 2]
    rz2 = rz**2
    O = torch.zeros_like(rz)
    J = torch.stack(
        [fx * rz, O, -fx * t[..., 0] * rz2, O, fy * rz, -fy * t[..., 1] * rz2],
        dim=-1,
    ).reshape(*rz.shape, 2, 3)
    T = torch.matmul(J, W)
    cov2d = torch.einsum("...ij,...jk,...kl->...il", T, cov3d, T.transpose(-1, -2))
    cov2d[..., 0, 0] = cov2d[..., 0, 0] + 0.3
    cov2d[..., 1, 1] = cov2d[..., 1, 1] + 0.3
    return cov2d[..., :2, :2]


def compute_cov2d_bounds(cov2d_mat):
    det_all = cov2d_mat[..., 0, 0] * cov2d_mat[..., 1, 1] - cov2d_mat[..., 0, 1] ** 2
    valid = det_all != 0
    det = det_all[valid]
    cov2d = cov2d_mat[valid]
    conic = torch.stack(
        [cov2d[..., 1, 1] / det, -cov2d[..., 0, 1] / det, cov2d[..., 0, 0] / det],
        dim=-1,
    )
    b = (cov2d[..., 0, 0] + cov2d[..., 1, 1]) / 2
    v1 = b + torch.sqrt(torch.clamp(b**2 - det, min=0.1))
    v2 = b - torch.sqrt(torch.clamp(b**2 - det, min=0.1))
    radius = torch.ceil(3.0 * torch.sqrt(torch.max(v1, v2)))
    radius_all = torch.zeros(*cov2d_mat.shape[:-2])
    conic_all = torch.zeros(*cov2d_mat.shape[:-2], 3)
    radius_all[valid] = radius
    conic_all[valid] = conic
    return conic_all, radius_all, valid


def clip_near_plane(p, viewmat, clip_thresh=0.01):
    R = viewmat[:3, :3]
    T = viewmat[:3, 3]
    p_view = torch.einsum("ij,nj->ni", R, p) + T[None]
    return p_view, p_view[..., 2] <= clip_thresh


def project_gaussians_forward(means3d, scales, glob_scale, quats, viewmat, fx, fy, clip_thresh=0.01):
    p_view, is_close = clip_near_plane(means3d, viewmat, clip_thresh)
    cov3d = scale_rot_to_cov3d(scales, glob_scale, quats)
    cov2d = project_cov3d_ewa(means3d, cov3d, viewmat, fx, fy)
    conic, radius, det_valid = compute_cov2d_bounds(cov2d)
    mask = (radius > 0) & (~is_close) & det_valid

    depths = p_view[..., 2]
    radii = radius.to(torch.int32)
    radii[~mask] = 0
    depths[~mask] = 0
    conic[~mask] = 0
    cov3d[~mask] = 0  # <-- IPL001
    cov2d[~mask] = 0  # <-- IPL001

    i, j = torch.triu_indices(3, 3)
    cov3d_triu = cov3d[..., i, j]
    i, j = torch.triu_indices(2, 2)
    cov2d_triu = cov2d[..., i, j]
    return cov3d_triu, cov2d_triu, depths, radii, conic, mask


def main():
    n = 16
    means3d = torch.randn(n, 3) * 0.5 + torch.tensor([0.0, 0.0, 3.0])
    means3d[:3, 2] = -1.0  # a few gaussians behind the camera get culled
    means3d.requires_grad_()
    scales = (torch.rand(n, 3) * 0.2 + 0.05).requires_grad_()
    quats = torch.randn(n, 4, requires_grad=True)
    viewmat = torch.eye(4)
    cov3d_triu, cov2d_triu, depths, radii, conic, mask = project_gaussians_forward(
        means3d, scales, 1.0, quats, viewmat, 50.0, 50.0
    )
    loss = cov3d_triu.sum() + cov2d_triu.sum() + depths.sum() + conic.sum()
    loss.backward()
    return means3d.grad, scales.grad, quats.grad


means_grad, scales_grad, quats_grad = main()

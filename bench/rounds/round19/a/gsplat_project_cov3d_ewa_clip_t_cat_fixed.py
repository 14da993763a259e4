# label: safe
# why: the fix builds the clipped camera-space means with torch.cat instead of writing into t; the remaining in-place writes touch cov2d, the output of a matmul that saved only its inputs.
# source: https://github.com/nerfstudio-project/gsplat/pull/59 (commit 3a22dd497eaebf57394b7ee84f3a75b2d32d6ce1)
import torch
from torch import Tensor

torch.manual_seed(0)


def scale_rot_to_cov3d(scale: Tensor, glob_scale: float, quat: Tensor) -> Tensor:
    quat = quat / quat.norm(dim=-1, keepdim=True)
    w, x, y, z = quat.unbind(-1)
    R = torch.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
        2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
        2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
    ], dim=-1).reshape(quat.shape[:-1] + (3, 3))
    M = R * glob_scale * scale[..., None, :]
    return M @ M.transpose(-1, -2)


def project_cov3d_ewa(mean3d: Tensor, cov3d: Tensor, viewmat: Tensor, fx: float, fy: float,
                      tan_fovx: float, tan_fovy: float) -> Tensor:
    assert mean3d.shape[-1] == 3, mean3d.shape
    W = viewmat[..., :3, :3]
    p = viewmat[..., :3, 3]
    t = torch.matmul(W, mean3d[..., None])[..., 0] + p

    lim_x = 1.3 * torch.tensor([tan_fovx], device=mean3d.device)
    lim_y = 1.3 * torch.tensor([tan_fovy], device=mean3d.device)

    min_lim_x = t[..., 2] * torch.min(lim_x, torch.max(-lim_x, t[..., 0] / t[..., 2]))
    min_lim_y = t[..., 2] * torch.min(lim_y, torch.max(-lim_y, t[..., 1] / t[..., 2]))
    t = torch.cat([min_lim_x[..., None], min_lim_y[..., None], t[..., 2, None]], dim=-1)

    rz = 1.0 / t[..., 2]
    rz2 = rz ** 2
    J = torch.stack(
        [
            torch.stack([fx * rz, torch.zeros_like(rz), -fx * t[..., 0] * rz2], dim=-1),
            torch.stack([torch.zeros_like(rz), fy * rz, -fy * t[..., 1] * rz2], dim=-1),
        ],
        dim=-2,
    )
    T = J @ W
    cov2d = T @ cov3d @ T.transpose(-1, -2)
    cov2d[..., 0, 0] = cov2d[..., 0, 0] + 0.3
    cov2d[..., 1, 1] = cov2d[..., 1, 1] + 0.3
    return cov2d


means = torch.randn(5, 3, requires_grad=True)
scales = torch.rand(5, 3, requires_grad=True)
quats = torch.randn(5, 4, requires_grad=True)
viewmat = torch.eye(4)
viewmat[2, 3] = 4.0

cov3d = scale_rot_to_cov3d(scales, 1.0, quats)
cov2d = project_cov3d_ewa(means, cov3d, viewmat, fx=20.0, fy=20.0, tan_fovx=0.5, tan_fovy=0.5)
loss = cov2d.pow(2).sum()
loss.backward()

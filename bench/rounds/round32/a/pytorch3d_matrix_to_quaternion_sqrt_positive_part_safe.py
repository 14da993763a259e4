# label: safe
# why: pytorch3d's _sqrt_positive_part fills a fresh `ret = torch.zeros_like(x)` with `ret[positive_mask] = torch.sqrt(x[positive_mask])`; the buffer is new and nothing saved it, so gradients flow back through matrix_to_quaternion correctly (the later switch to torch.where was for ONNX export, not for autograd).
# source: https://github.com/facebookresearch/pytorch3d/commit/7edaee71a9583f8f1eedf91187aa77a0797c38e0
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _sqrt_positive_part(x: torch.Tensor) -> torch.Tensor:
    """
    Returns torch.sqrt(torch.max(0, x))
    but with a zero subgradient where x is 0.
    """
    ret = torch.zeros_like(x)
    positive_mask = x > 0
    ret[positive_mask] = torch.sqrt(x[positive_mask])
    return ret


def standardize_quaternion(quaternions: torch.Tensor) -> torch.Tensor:
    return torch.where(quaternions[..., 0:1] < 0, -quaternions, quaternions)


def matrix_to_quaternion(matrix: torch.Tensor) -> torch.Tensor:
    """
    Convert rotations given as rotation matrices to quaternions.
    """
    if matrix.size(-1) != 3 or matrix.size(-2) != 3:
        raise ValueError(f"Invalid rotation matrix shape {matrix.shape}.")

    batch_dim = matrix.shape[:-2]
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = torch.unbind(
        matrix.reshape(batch_dim + (9,)), dim=-1
    )

    q_abs = _sqrt_positive_part(
        torch.stack(
            [
                1.0 + m00 + m11 + m22,
                1.0 + m00 - m11 - m22,
                1.0 - m00 + m11 - m22,
                1.0 - m00 - m11 + m22,
            ],
            dim=-1,
        )
    )

    # we produce the desired quaternion multiplied by each of r, i, j, k
    quat_by_rijk = torch.stack(
        [
            torch.stack([q_abs[..., 0] ** 2, m21 - m12, m02 - m20, m10 - m01], dim=-1),
            torch.stack([m21 - m12, q_abs[..., 1] ** 2, m10 + m01, m02 + m20], dim=-1),
            torch.stack([m02 - m20, m10 + m01, q_abs[..., 2] ** 2, m12 + m21], dim=-1),
            torch.stack([m10 - m01, m20 + m02, m21 + m12, q_abs[..., 3] ** 2], dim=-1),
        ],
        dim=-2,
    )

    # We floor here at 0.1 but the exact level is not important; if q_abs is small,
    # the candidate won't be picked.
    flr = torch.tensor(0.1).to(dtype=q_abs.dtype, device=q_abs.device)
    quat_candidates = quat_by_rijk / (2.0 * q_abs[..., None].max(flr))

    # if not for numerical problems, quat_candidates[i] should be same (up to a sign),
    # forall i; we pick the best-conditioned one (with the largest denominator)
    out = quat_candidates[
        F.one_hot(q_abs.argmax(dim=-1), num_classes=4) > 0.5, :
    ].reshape(batch_dim + (4,))
    return standardize_quaternion(out)


def rotation_6d_to_matrix(d6: torch.Tensor) -> torch.Tensor:
    a1, a2 = d6[..., :3], d6[..., 3:]
    b1 = F.normalize(a1, dim=-1)
    b2 = a2 - (b1 * a2).sum(-1, keepdim=True) * b1
    b2 = F.normalize(b2, dim=-1)
    b3 = torch.cross(b1, b2, dim=-1)
    return torch.stack((b1, b2, b3), dim=-2)


class PoseRegressor(nn.Module):
    """Object-pose head: image features -> 6D rotation -> matrix -> quaternion."""

    def __init__(self, in_dim=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, in_dim, 3, stride=2, padding=1), nn.ReLU(inplace=True),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.rot_head = nn.Linear(in_dim, 6)

    def forward(self, images):
        d6 = self.rot_head(self.backbone(images))
        rotmat = rotation_6d_to_matrix(d6)
        return matrix_to_quaternion(rotmat)


def quaternion_loss(pred, target):
    # q and -q encode the same rotation
    return (1 - (pred * target).sum(-1).abs()).mean()


def main():
    model = PoseRegressor()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images = torch.randn(8, 3, 16, 16)
    target = F.normalize(torch.randn(8, 4), dim=-1)

    pred_quat = model(images)
    loss = quaternion_loss(pred_quat, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach(), pred_quat.detach(), model.rot_head.weight.grad


loss, pred_quat, rot_head_grad = main()

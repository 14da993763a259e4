# label: safe
# why: the masked rotation is written into a freshly allocated identity (eye_like with shared_memory=False), so the slice assignment touches no tensor that an earlier op saved and gradients reach the axis-angle input.
# source: https://github.com/kornia/kornia/blob/70e6c332d6f3faa23d3dfe83d51696bac6aabdd0/kornia/geometry/conversions.py (pre-change version; kornia PR #2346)
import torch
from torch import Tensor

torch.manual_seed(0)


def eye_like(n: int, input: Tensor, shared_memory: bool = False) -> Tensor:
    identity = torch.eye(n, device=input.device, dtype=input.dtype)
    return identity[None].expand(input.shape[0], n, n) if shared_memory else identity[None].repeat(input.shape[0], 1, 1)


def angle_axis_to_rotation_matrix(angle_axis: Tensor) -> Tensor:
    def _compute_rotation_matrix(angle_axis, theta2, eps=1e-6):
        k_one = 1.0
        theta = torch.sqrt(theta2)
        wxyz = angle_axis / (theta + eps)
        wx, wy, wz = torch.chunk(wxyz, 3, dim=1)
        cos_theta = torch.cos(theta)
        sin_theta = torch.sin(theta)
        r00 = cos_theta + wx * wx * (k_one - cos_theta)
        r10 = wz * sin_theta + wx * wy * (k_one - cos_theta)
        r20 = -wy * sin_theta + wx * wz * (k_one - cos_theta)
        r01 = wx * wy * (k_one - cos_theta) - wz * sin_theta
        r11 = cos_theta + wy * wy * (k_one - cos_theta)
        r21 = wx * sin_theta + wy * wz * (k_one - cos_theta)
        r02 = wy * sin_theta + wx * wz * (k_one - cos_theta)
        r12 = -wx * sin_theta + wy * wz * (k_one - cos_theta)
        r22 = cos_theta + wz * wz * (k_one - cos_theta)
        rotation_matrix = torch.cat([r00, r01, r02, r10, r11, r12, r20, r21, r22], dim=1)
        return rotation_matrix.view(-1, 3, 3)

    def _compute_rotation_matrix_taylor(angle_axis):
        rx, ry, rz = torch.chunk(angle_axis, 3, dim=1)
        k_one = torch.ones_like(rx)
        rotation_matrix = torch.cat([k_one, -rz, ry, rz, k_one, -rx, -ry, rx, k_one], dim=1)
        return rotation_matrix.view(-1, 3, 3)

    _angle_axis = torch.unsqueeze(angle_axis, dim=1)
    theta2 = torch.matmul(_angle_axis, _angle_axis.transpose(1, 2))
    theta2 = torch.squeeze(theta2, dim=1)

    rotation_matrix_normal = _compute_rotation_matrix(angle_axis, theta2)
    rotation_matrix_taylor = _compute_rotation_matrix_taylor(angle_axis)

    eps = 1e-6
    mask = (theta2 > eps).view(-1, 1, 1).to(theta2.device)
    mask_pos = (mask).type_as(theta2)
    mask_neg = (~mask).type_as(theta2)

    # create output pose matrix
    rotation_matrix = eye_like(3, angle_axis, shared_memory=False)
    # fill output matrix with masked values
    rotation_matrix[..., :3, :3] = mask_pos * rotation_matrix_normal + mask_neg * rotation_matrix_taylor
    return rotation_matrix


# camera pose refinement: optimise axis-angle rotations so that rotated points match targets
angle_axis = torch.tensor([[0.3, -0.2, 0.1], [0.0, 0.0, 0.0], [1.2, 0.4, -0.7]], requires_grad=True)
points = torch.randn(3, 5, 3)
targets = torch.randn(3, 5, 3)
R = angle_axis_to_rotation_matrix(angle_axis)
rotated = points @ R.transpose(1, 2)
loss = (rotated - targets).pow(2).mean()
loss.backward()

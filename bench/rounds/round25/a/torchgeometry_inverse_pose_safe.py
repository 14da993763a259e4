# label: safe
# why: pose_inv is a fresh clone of pose and its slices are only read through a scalar multiply (which saves nothing) before the second slice write, so no tensor saved for backward is overwritten and the gradient w.r.t. the pose is correct.
# source: https://github.com/kornia/kornia/commit/56392fdbec2deebdc115f13e2bc3f8505836ceff
import torch
import torch.nn as nn

torch.manual_seed(0)


def inverse_pose(pose):
    """Inverts a 4x4 pose.

    Shape:
        - Input: :math:`(N, 4, 4)`
        - Output: :math:`(N, 4, 4)`
    """
    if not torch.is_tensor(pose):
        raise TypeError("Input type is not a torch.Tensor. Got {}".format(type(pose)))
    if not pose.shape[-2:] == (4, 4):
        raise ValueError("Input size must be a 4x4 tensor. Got {}".format(pose.shape))
    pose_shape = pose.shape
    if len(pose_shape) == 2:
        pose = torch.unsqueeze(pose, dim=0)

    pose_inv = pose.clone()
    pose_inv[..., :3, 0:3] = torch.transpose(pose[..., :3, :3], 1, 2)
    pose_inv[..., :3, 3:4] = torch.matmul(-1.0 * pose_inv[..., :3, :3], pose[..., :3, 3:4])

    if len(pose_shape) == 2:
        pose_inv = torch.squeeze(pose_inv, dim=0)

    return pose_inv


class InversePose(nn.Module):
    """Creates a transformation that inverts a 4x4 pose."""

    def __init__(self):
        super(InversePose, self).__init__()

    def forward(self, input):
        return inverse_pose(input)


def rtvec_to_pose(rtvec):
    # rotation from a small-angle skew matrix, translation appended
    wx, wy, wz, tx, ty, tz = torch.chunk(rtvec, 6, dim=-1)
    zeros = torch.zeros_like(wx)
    ones = torch.ones_like(wx)
    row0 = torch.cat([ones, -wz, wy, tx], dim=-1)
    row1 = torch.cat([wz, ones, -wx, ty], dim=-1)
    row2 = torch.cat([-wy, wx, ones, tz], dim=-1)
    row3 = torch.cat([zeros, zeros, zeros, ones], dim=-1)
    return torch.stack([row0, row1, row2, row3], dim=-2)


def main():
    rtvec = (0.1 * torch.randn(2, 6)).requires_grad_()
    points = torch.randn(2, 4, 5)
    points[:, 3] = 1.0
    pose = rtvec_to_pose(rtvec)
    pose_inv = InversePose()(pose)
    points_src = torch.matmul(pose_inv, points)
    loss = points_src[:, :3].pow(2).mean()
    loss.backward()
    return loss.detach(), rtvec.grad


loss, rtvec_grad = main()

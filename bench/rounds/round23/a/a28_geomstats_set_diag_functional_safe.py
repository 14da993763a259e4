# label: safe
# why: after the fix set_diag builds a new tensor (off-diagonal part plus an einsum-built diagonal) and the caller rebinds vector_outer to it, so the diagonal view that maximum saved for backward is never overwritten.
# source: https://github.com/geomstats/geomstats/commit/315c530357ed8efecbe19ef725e2749ee08e198e ("remove inplace operation in pytorch/set_diag", fixing https://github.com/geomstats/geomstats/issues/904)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def set_diag(x, new_diag):
    """Set the diagonal along the last two axis, returning a new array."""
    arr_shape = x.shape
    off_diag = (1 - torch.eye(arr_shape[-1])) * x
    diag = torch.einsum('ij,...i->...ij', torch.eye(new_diag.shape[-1]), new_diag)
    return diag + off_diag


class _SpecialOrthogonal3Vectors:
    def __init__(self, epsilon=0.):
        self.epsilon = epsilon

    @staticmethod
    def skew_matrix_from_vector(vec):
        zero = torch.zeros_like(vec[..., 0])
        return torch.stack([
            torch.stack([zero, -vec[..., 2], vec[..., 1]], dim=-1),
            torch.stack([vec[..., 2], zero, -vec[..., 0]], dim=-1),
            torch.stack([-vec[..., 1], vec[..., 0], zero], dim=-1)], dim=-2)

    @staticmethod
    def vector_from_skew_matrix(skew_mat):
        return torch.stack([skew_mat[..., 2, 1], skew_mat[..., 0, 2], skew_mat[..., 1, 0]], dim=-1)

    def regularize(self, point):
        theta = torch.linalg.norm(point, dim=-1)
        k = torch.floor(theta / 2. / math.pi)
        angle = theta - 2 * k * math.pi
        theta_eps = torch.where(torch.isclose(theta, torch.zeros_like(theta)), torch.ones_like(theta), theta)
        normalized_angle = torch.where(angle <= math.pi, angle, 2 * math.pi - angle)
        norm_ratio = torch.where(torch.isclose(theta, torch.zeros_like(theta)), torch.ones_like(theta), normalized_angle / theta_eps)
        norm_ratio = torch.where(angle > math.pi, -norm_ratio, norm_ratio)
        return torch.einsum('...,...i->...i', norm_ratio, point)

    def matrix_from_rotation_vector(self, rot_vec):
        return torch.linalg.matrix_exp(self.skew_matrix_from_vector(rot_vec))

    def rotation_vector_from_matrix(self, rot_mat):
        n_rot_mats, _, _ = rot_mat.shape
        trace = torch.diagonal(rot_mat, dim1=1, dim2=2).sum(-1).unsqueeze(1)
        trace_num = torch.clamp(trace, -1, 3)
        angle = torch.arccos(0.5 * (trace_num - 1))
        rot_mat_transpose = rot_mat.transpose(1, 2)
        rot_vec_not_pi = self.vector_from_skew_matrix(rot_mat - rot_mat_transpose)
        mask_0 = torch.isclose(angle, torch.zeros_like(angle)).to(angle.dtype)
        mask_pi = torch.isclose(angle, torch.full_like(angle, math.pi), atol=1e-2).to(angle.dtype)
        mask_else = (1 - mask_0) * (1 - mask_pi)

        numerator = 0.5 * mask_0 + angle * mask_else
        denominator = (1 - angle ** 2 / 6) * mask_0 + 2 * torch.sin(angle) * mask_else + mask_pi
        rot_vec_not_pi = rot_vec_not_pi * numerator / denominator

        vector_outer = 0.5 * (torch.eye(3) + rot_mat)
        vector_outer = set_diag(vector_outer, torch.maximum(torch.zeros(()), torch.diagonal(vector_outer, dim1=1, dim2=2)))
        squared_diag_comp = torch.diagonal(vector_outer, dim1=1, dim2=2)
        diag_comp = torch.sqrt(squared_diag_comp)
        norm_line = torch.linalg.norm(vector_outer, dim=2)
        max_line_index = torch.argmax(norm_line, dim=1)
        selected_line = vector_outer[range(n_rot_mats), max_line_index]
        signs = torch.sign(selected_line)
        rot_vec_pi = angle * signs * diag_comp

        rot_vec = rot_vec_not_pi + mask_pi * rot_vec_pi
        return self.regularize(rot_vec)


def geodesic_loss(group, rot_vec_pred, rot_vec_true):
    rot_pred = group.matrix_from_rotation_vector(rot_vec_pred)
    rot_true = group.matrix_from_rotation_vector(rot_vec_true)
    log = group.rotation_vector_from_matrix(rot_true.transpose(1, 2) @ rot_pred)
    return (log ** 2).sum(-1).mean()


def main():
    so3 = _SpecialOrthogonal3Vectors()
    pose_net = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3))
    features = torch.randn(6, 12)
    rot_vec_true = torch.randn(6, 3) * 0.5
    loss = geodesic_loss(so3, pose_net(features), rot_vec_true)
    loss.backward()
    return loss.detach(), pose_net[0].weight.grad


loss, grad = main()

# label: safe
# why: the fixed set_diag builds a new matrix from the off-diagonal part and the new diagonal instead of writing into x, and the caller rebinds vector_outer to the result, so the diagonal view saved by torch.maximum is never overwritten.
# source: https://github.com/geomstats/geomstats/commit/fadaa7df10b820b7fac21f10eb4a6aeca7d0738a
import math

import torch

torch.manual_seed(0)


class gs:
    pi = math.pi

    @staticmethod
    def set_diag(x, new_diag):
        """Set the diagonal along the last two axis."""
        arr_shape = x.shape
        off_diag = (1 - torch.eye(arr_shape[-1])) * x
        diag = torch.einsum('ij,...i->...ij', torch.eye(new_diag.shape[-1]), new_diag)
        return diag + off_diag

    @staticmethod
    def maximum(a, b):
        return torch.maximum(torch.as_tensor(a, dtype=b.dtype), b)

    @staticmethod
    def diagonal(x, axis1=0, axis2=1):
        return torch.diagonal(x, dim1=axis1, dim2=axis2)


class _SpecialOrthogonal3Vectors:
    @staticmethod
    def vector_from_skew_matrix(skew_mat):
        return torch.stack([skew_mat[:, 2, 1], skew_mat[:, 0, 2], skew_mat[:, 1, 0]], dim=1)

    def rotation_vector_from_matrix(self, rot_mat):
        n_rot_mats, _, _ = rot_mat.shape
        trace = torch.diagonal(rot_mat, dim1=1, dim2=2).sum(-1, keepdim=True)
        trace_num = torch.clamp(trace, -1, 3)
        angle = torch.arccos(0.5 * (trace_num - 1))
        rot_mat_transpose = rot_mat.transpose(1, 2)
        rot_vec_not_pi = self.vector_from_skew_matrix(rot_mat - rot_mat_transpose)
        mask_0 = torch.isclose(angle, torch.zeros_like(angle)).to(angle.dtype)
        mask_pi = torch.isclose(angle, torch.full_like(angle, gs.pi), atol=1e-2).to(angle.dtype)
        mask_else = (1 - mask_0) * (1 - mask_pi)

        numerator = 0.5 * mask_0 + angle * mask_else
        denominator = (1 - angle ** 2 / 6) * mask_0 + 2 * torch.sin(angle) * mask_else + mask_pi
        rot_vec_not_pi = rot_vec_not_pi * numerator / denominator

        vector_outer = 0.5 * (torch.eye(3) + rot_mat)
        vector_outer = gs.set_diag(vector_outer, gs.maximum(0., gs.diagonal(vector_outer, axis1=1, axis2=2)))
        squared_diag_comp = gs.diagonal(vector_outer, axis1=1, axis2=2)
        diag_comp = torch.sqrt(squared_diag_comp + 1e-12)
        rot_vec_pi = angle * diag_comp

        return rot_vec_not_pi + mask_pi * rot_vec_pi


def rotation_matrix(axis_angle):
    theta = axis_angle.norm(dim=-1, keepdim=True)
    k = axis_angle / theta
    kx, ky, kz = k.unbind(-1)
    zero = torch.zeros_like(kx)
    K = torch.stack([zero, -kz, ky, kz, zero, -kx, -ky, kx, zero], dim=-1).view(-1, 3, 3)
    theta = theta.unsqueeze(-1)
    return torch.eye(3) + torch.sin(theta) * K + (1 - torch.cos(theta)) * (K @ K)


def main():
    so3 = _SpecialOrthogonal3Vectors()
    axis_angle = (torch.randn(4, 3) * 0.8).requires_grad_()
    rot_mat = rotation_matrix(axis_angle)
    rot_vec = so3.rotation_vector_from_matrix(rot_mat)
    loss = (rot_vec - axis_angle.detach()).pow(2).sum()
    loss.backward()
    return rot_vec.detach(), axis_angle.grad


rot_vec, axis_angle_grad = main()

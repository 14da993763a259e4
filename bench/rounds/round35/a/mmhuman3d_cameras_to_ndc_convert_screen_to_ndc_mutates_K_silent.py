# label: hazard silent
# why: Before the fix, convert_screen_to_ndc reshapes the caller's intrinsics (a view of cameras.K) and rescales them in place (`K[:, 0, 0] /= w_src / 2`, ...); NewAttributeCameras.to_ndc(), meant to return a new NDC camera, thereby also turns the screen camera's K into NDC intrinsics, and the pixel-space reprojection loss computed with the original camera afterwards is wrong (the commit clones K first).
# source: https://github.com/open-mmlab/mmhuman3d/commit/894bebef2f983d30f032865cbd2004f472e0f44a
from typing import Iterable, Optional, Tuple, Union

import torch
import torch.nn as nn


def convert_screen_to_ndc(
        K: torch.Tensor,
        resolution: Union[int, Tuple[int, int], torch.Tensor],
        sign: Optional[Iterable[int]] = None,
        is_perspective: bool = True) -> torch.Tensor:
    """Convert intrinsic matrix from screen to ndc."""
    if sign is None:
        sign = [1, 1, 1]
    if not isinstance(K, torch.Tensor):
        raise TypeError(f'K should be `torch.Tensor`, type(K): {type(K)}')
    if K.ndim == 2:
        K = K[None].reshape(-1, 4, 4)
    elif K.ndim == 3:
        K = K.reshape(-1, 4, 4)
    else:
        raise ValueError(f'Wrong ndim of K: {K.ndim}')

    if isinstance(resolution, (int, float)):
        w_src = h_src = resolution
    else:
        h_src, w_src = resolution
    aspect_ratio = w_src / h_src
    K[:, 0, 0] /= w_src / 2  # <-- IPL004
    K[:, 1, 1] /= h_src / 2  # <-- IPL004
    if aspect_ratio > 1:
        K[:, 0, 0] *= aspect_ratio  # <-- IPL004
    else:
        K[:, 1, 1] /= aspect_ratio  # <-- IPL004
    if is_perspective:
        K[:, 0, 2] = K[:, 0, 2] / (w_src / 2) - 1  # <-- IPL004
        K[:, 1, 2] = K[:, 1, 2] / (h_src / 2) - 1  # <-- IPL004
        K[:, 0, 2] *= sign[0]  # <-- IPL004
        K[:, 1, 2] *= sign[1]  # <-- IPL004
    else:
        K[:, 0, 3] = K[:, 0, 3] / (w_src / 2) - 1  # <-- IPL004
        K[:, 1, 3] = K[:, 1, 3] / (h_src / 2) - 1  # <-- IPL004
        K[:, 0, 3] *= sign[0]  # <-- IPL004
        K[:, 1, 3] *= sign[1]  # <-- IPL004
    return K


class NewAttributeCameras:
    """Reduced from mmhuman3d's pytorch3d-based cameras: K (N, 4, 4), R, T."""

    def __init__(self, K, R=None, T=None, in_ndc=True, resolution=None, is_perspective=True):
        N = K.shape[0]
        self.K = K
        self.R = torch.eye(3)[None].repeat(N, 1, 1) if R is None else R
        self.T = torch.zeros(N, 3) if T is None else T
        self._in_ndc = in_ndc
        self.image_size = resolution
        self._is_perspective = is_perspective

    def in_ndc(self):
        return self._in_ndc

    def is_perspective(self):
        return self._is_perspective

    def get_image_size(self):
        return self.image_size

    def transform_points(self, points):
        """world points (N, V, 3) -> (N, V, 2) in the camera's image space."""
        points_view = points @ self.R + self.T[:, None]
        homo = torch.cat([points_view, torch.ones_like(points_view[..., :1])], dim=-1)
        proj = homo @ self.K.transpose(1, 2)
        return proj[..., :2] / proj[..., 3:4]

    def to_ndc(self, **kwargs):
        """Convert to ndc."""
        if self.in_ndc():
            print('Redundant operation, already in ndc.')
        else:
            image_size = self.get_image_size()
            if image_size is None:
                image_size = kwargs.get('image_size')
            K = convert_screen_to_ndc(
                K=self.K,
                resolution=self.image_size,
                is_perspective=self.is_perspective())
            return self.__class__(
                K=K,
                R=self.R,
                T=self.T,
                in_ndc=True,
                resolution=image_size,
                is_perspective=self.is_perspective())


def build_screen_cameras(focal_length, principal_point, resolution):
    N = focal_length.shape[0]
    K = torch.zeros(N, 4, 4)
    K[:, 0, 0] = focal_length[:, 0]
    K[:, 1, 1] = focal_length[:, 1]
    K[:, 0, 2] = principal_point[:, 0]
    K[:, 1, 2] = principal_point[:, 1]
    K[:, 2, 3] = 1
    K[:, 3, 2] = 1
    return NewAttributeCameras(K=K, in_ndc=False, resolution=resolution)


class SMPLifyJoints(nn.Module):
    """Stand-in for the fitted body: template joints plus a learnable global translation."""

    def __init__(self, num_joints=6):
        super().__init__()
        self.register_buffer('template', torch.randn(num_joints, 3) * 0.3)
        self.transl = nn.Parameter(torch.tensor([[0.0, 0.0, 3.0]]))

    def forward(self, batch_size):
        return self.template[None].expand(batch_size, -1, -1) + self.transl[:, None]


def main():
    torch.manual_seed(0)
    resolution = (64, 96)
    cameras = build_screen_cameras(
        focal_length=torch.tensor([[80.0, 80.0], [90.0, 90.0]]),
        principal_point=torch.tensor([[48.0, 32.0], [47.0, 33.0]]),
        resolution=resolution)
    body = SMPLifyJoints()
    gt_kp2d_screen = torch.rand(2, 6, 2) * torch.tensor([96.0, 64.0])
    gt_kp2d_ndc = torch.rand(2, 6, 2) * 2 - 1

    ndc_cameras = cameras.to_ndc()
    joints = body(2)
    pred_ndc = ndc_cameras.transform_points(joints)
    pred_screen = cameras.transform_points(joints)
    loss = ((pred_screen - gt_kp2d_screen) / 96.0).pow(2).mean() + (pred_ndc - gt_kp2d_ndc).pow(2).mean()
    loss.backward()
    return loss, pred_ndc, pred_screen, body.transl.grad


loss, pred_ndc, pred_screen, transl_grad = main()
print(float(loss))

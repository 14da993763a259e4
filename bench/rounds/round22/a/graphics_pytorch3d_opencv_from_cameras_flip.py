# label: hazard silent
# why: opencv_from_cameras_projection binds R_pytorch3d = cameras.R and T_pytorch3d = cameras.T and flips their x/y axes in place (*= -1) to reach the OpenCV convention, so exporting the cameras silently flips the caller's PerspectiveCameras, and any later projection (or a second export) uses the wrong pose.
# source: https://github.com/facebookresearch/pytorch3d/commit/75432a069503a2a51a79516f10ae8eb246e816d0 (pytorch3d/utils/camera_conversions.py: R_pytorch3d = cameras.R.clone(), T_pytorch3d = cameras.T.clone())
import torch

torch.manual_seed(0)


class PerspectiveCameras(object):
    """Minimal PyTorch3D-style perspective cameras in NDC convention (row-vector points: X_view = X_world @ R + T)."""

    def __init__(self, focal_length, principal_point, R, T):
        self.focal_length = focal_length
        self.principal_point = principal_point
        self.R = R
        self.T = T

    def transform_points(self, points):
        # world -> view
        X_view = torch.bmm(points, self.R) + self.T[:, None, :]
        # view -> NDC
        xy = X_view[..., :2] / X_view[..., 2:3]
        return xy * self.focal_length[:, None, :] + self.principal_point[:, None, :]


def opencv_from_cameras_projection(cameras, image_size):
    """Converts a batch of PerspectiveCameras into OpenCV-convention R, tvec and camera_matrix."""
    R_pytorch3d = cameras.R
    T_pytorch3d = cameras.T
    focal_pytorch3d = cameras.focal_length
    p0_pytorch3d = cameras.principal_point
    T_pytorch3d[:, :2] *= -1  # <-- IPL004
    R_pytorch3d[:, :, :2] *= -1  # <-- IPL004
    tvec = T_pytorch3d.clone()
    R = R_pytorch3d.permute(0, 2, 1)

    # Retype the image_size correctly and flip to width, height.
    image_size_wh = image_size.to(R).flip(dims=(1,))

    principal_point = (-p0_pytorch3d + 1.0) * (0.5 * image_size_wh)
    focal_length = focal_pytorch3d * (0.5 * image_size_wh)

    camera_matrix = torch.zeros_like(R)
    camera_matrix[:, :2, 2] = principal_point
    camera_matrix[:, 2, 2] = 1.0
    camera_matrix[:, 0, 0] = focal_length[:, 0]
    camera_matrix[:, 1, 1] = focal_length[:, 1]
    return R, tvec, camera_matrix


def main():
    N = 2
    angles = torch.rand(N) * 0.5
    c, s = torch.cos(angles), torch.sin(angles)
    R = torch.zeros(N, 3, 3)
    R[:, 0, 0], R[:, 0, 2], R[:, 1, 1], R[:, 2, 0], R[:, 2, 2] = c, -s, 1.0, s, c
    T = torch.tensor([[0.1, -0.2, 4.0], [0.3, 0.1, 5.0]])
    cameras = PerspectiveCameras(focal_length=torch.full((N, 2), 1.5), principal_point=torch.zeros(N, 2), R=R, T=T)
    image_size = torch.tensor([[480, 640], [480, 640]])

    points = torch.randn(N, 5, 3) * 0.5
    R_cv, tvec, K = opencv_from_cameras_projection(cameras, image_size)
    # the renderer keeps projecting with the same PyTorch3D cameras afterwards
    ndc = cameras.transform_points(points)
    return R_cv, tvec, K, ndc


R_cv, tvec, K, ndc = main()

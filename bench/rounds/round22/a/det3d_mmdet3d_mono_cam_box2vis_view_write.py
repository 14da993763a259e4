# label: hazard silent
# why: mono_cam_box2vis takes dim = cam_box.dims and yaw = cam_box.yaw, which are views into the caller's box tensor, and then swaps dims and adds the global yaw in place, so converting predictions for visualisation silently rewrites the detector's CameraInstance3DBoxes that the caller keeps using.
# source: https://github.com/open-mmlab/mmdetection3d/commit/eb1258341155510a0e40290104d225fc0cc992f8 ("[Fix] Seveal bugs", mmdet3d/core/bbox/structures/utils.py: loc/dim/yaw/feats now .clone())
import math

import torch

torch.manual_seed(0)


class CameraInstance3DBoxes(object):
    """3D boxes of instances in CAM coordinates: (x, y, z, x_size, y_size, z_size, yaw, vx, vz)."""

    def __init__(self, tensor, box_dim=7, with_yaw=True, origin=(0.5, 1.0, 0.5)):
        tensor = torch.as_tensor(tensor, dtype=torch.float32)
        self.box_dim = box_dim
        self.with_yaw = with_yaw
        self.tensor = tensor.clone()
        if origin != (0.5, 1.0, 0.5):
            dst = self.tensor.new_tensor((0.5, 1.0, 0.5))
            src = self.tensor.new_tensor(origin)
            self.tensor[:, :3] += self.tensor[:, 3:6] * (dst - src)

    @property
    def dims(self):
        return self.tensor[:, 3:6]

    @property
    def yaw(self):
        return self.tensor[:, 6]

    @property
    def bottom_center(self):
        return self.tensor[:, :3]

    @property
    def gravity_center(self):
        bottom_center = self.bottom_center
        gravity_center = torch.zeros_like(bottom_center)
        gravity_center[:, [0, 2]] = bottom_center[:, [0, 2]]
        gravity_center[:, 1] = bottom_center[:, 1] - self.tensor[:, 4] * 0.5
        return gravity_center


def mono_cam_box2vis(cam_box):
    """Convert boxes from CameraInstance3DBoxes to the box format used for nuScenes visualization."""
    assert isinstance(cam_box, CameraInstance3DBoxes), 'input bbox should be CameraInstance3DBoxes!'

    loc = cam_box.gravity_center
    dim = cam_box.dims
    yaw = cam_box.yaw
    feats = cam_box.tensor[:, 7:]
    # rotate along x-axis for np.pi / 2
    dim[:, [1, 2]] = dim[:, [2, 1]]  # <-- IPL004
    # change local yaw to global yaw for visualization
    yaw += torch.atan2(loc[:, 0], loc[:, 2])  # <-- IPL004
    # convert yaw by (-yaw - np.pi / 2)
    yaw = -yaw - math.pi / 2
    cam_box = torch.cat([loc, dim, yaw[:, None], feats], dim=1)
    cam_box = CameraInstance3DBoxes(cam_box, box_dim=cam_box.shape[-1], origin=(0.5, 0.5, 0.5))
    return cam_box


def main():
    # FCOS3D-style predictions for one image: (x, y, z, l, h, w, yaw, vx, vz)
    preds = torch.rand(4, 9) * torch.tensor([10., 2., 40., 4., 2., 2., 3.14, 1., 1.])
    bboxes = CameraInstance3DBoxes(preds, box_dim=9)
    vis_boxes = mono_cam_box2vis(bboxes)
    # the detector's own boxes are still used afterwards (e.g. for evaluation / BEV projection)
    bev = torch.stack([bboxes.tensor[:, 0], bboxes.tensor[:, 2], bboxes.dims[:, 0], bboxes.dims[:, 2], bboxes.yaw], dim=1)
    return vis_boxes.tensor, bev


vis_tensor, bev = main()

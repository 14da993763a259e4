# label: hazard silent no-twin
# why: BackgroundPointsFilter takes `gt_bboxes_3d.tensor.numpy()`, which shares memory with the box tensor, and writes the gravity centers into its first three columns, so the ground-truth boxes handed to later pipeline steps are silently shifted up by half their height.
# source: https://github.com/open-mmlab/mmdetection3d/commit/57ea75e11c1a138410159c373c117cd5d1456128
import numpy as np
import torch

torch.manual_seed(0)


class LiDARInstance3DBoxes(object):
    """(x, y, z_bottom, dx, dy, dz, yaw) boxes"""

    def __init__(self, tensor):
        self.tensor = tensor

    @property
    def gravity_center(self):
        bottom_center = self.tensor[:, :3]
        gravity_center = torch.zeros_like(bottom_center)
        gravity_center[:, :2] = bottom_center[:, :2]
        gravity_center[:, 2] = bottom_center[:, 2] + self.tensor[:, 5] * 0.5
        return gravity_center


def points_in_boxes(points, boxes):
    # axis-aligned test around gravity centers (yaw is 0 here)
    rel = np.abs(points[:, None, :3] - boxes[None, :, :3])
    return np.all(rel <= boxes[None, :, 3:6] / 2, axis=-1)


class BackgroundPointsFilter(object):
    def __init__(self, bbox_enlarge_range):
        if isinstance(bbox_enlarge_range, float):
            bbox_enlarge_range = [bbox_enlarge_range] * 3
        self.bbox_enlarge_range = np.array(bbox_enlarge_range, dtype=np.float32)[np.newaxis, :]

    def __call__(self, input_dict):
        points = input_dict["points"]
        gt_bboxes_3d = input_dict["gt_bboxes_3d"]

        gt_bboxes_3d_np = gt_bboxes_3d.tensor.numpy()
        gt_bboxes_3d_np[:, :3] = gt_bboxes_3d.gravity_center.numpy()  # <-- IPL004: the numpy array aliases gt_bboxes_3d.tensor
        enlarged_gt_bboxes_3d = gt_bboxes_3d_np.copy()
        enlarged_gt_bboxes_3d[:, 3:6] += self.bbox_enlarge_range
        points_numpy = points.numpy()
        foreground_masks = points_in_boxes(points_numpy, gt_bboxes_3d_np).max(1)
        enlarge_foreground_masks = points_in_boxes(points_numpy, enlarged_gt_bboxes_3d).max(1)
        valid_masks = ~np.logical_and(~foreground_masks, enlarge_foreground_masks)
        input_dict["points"] = points[torch.from_numpy(valid_masks)]
        return input_dict


boxes = torch.tensor([[0.0, 0.0, -1.0, 2.0, 2.0, 1.5, 0.0], [5.0, 5.0, -1.0, 1.0, 1.0, 2.0, 0.0]])
points = torch.rand(200, 4) * torch.tensor([8.0, 8.0, 3.0, 1.0]) - torch.tensor([1.5, 1.5, 1.5, 0.0])
results = {"points": points, "gt_bboxes_3d": LiDARInstance3DBoxes(boxes)}

results = BackgroundPointsFilter(0.5)(results)
kept_points = results["points"]
# a later step (e.g. target assignment) reads the boxes again
box_bottom_z = results["gt_bboxes_3d"].tensor[:, 2].clone()
box_centers = results["gt_bboxes_3d"].gravity_center

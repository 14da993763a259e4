# label: safe
# why: post-fix BackgroundPointsFilter clones the ground-truth box tensor (and the points) before writing gravity centers into the copy, so the gt boxes handed to the rest of the pipeline keep their bottom-center z.
# source: https://github.com/open-mmlab/mmdetection3d/pull/609 (commit cde515d5157fbff427bd5849335f473c8066a394, pre-fix mmdet3d/datasets/pipelines/transforms_3d.py)
import math

import torch

torch.manual_seed(0)


class LiDARInstance3DBoxes(object):
    def __init__(self, tensor, box_dim=7):
        self.tensor = tensor
        self.box_dim = box_dim

    @property
    def gravity_center(self):
        bottom_center = self.tensor[:, :3]
        gravity_center = torch.zeros_like(bottom_center)
        gravity_center[:, :2] = bottom_center[:, :2]
        gravity_center[:, 2] = bottom_center[:, 2] + self.tensor[:, 5] * 0.5
        return gravity_center


class LiDARPoints(object):
    def __init__(self, tensor):
        self.tensor = tensor

    def __getitem__(self, item):
        return LiDARPoints(self.tensor[item])


def points_in_rbbox(points, rbbox):
    # rbbox: (M, 7) gravity-centered boxes x, y, z, dx, dy, dz, yaw
    local = points[:, None, :3] - rbbox[None, :, :3]
    cos, sin = torch.cos(-rbbox[:, 6]), torch.sin(-rbbox[:, 6])
    x = local[..., 0] * cos - local[..., 1] * sin
    y = local[..., 0] * sin + local[..., 1] * cos
    z = local[..., 2]
    return (x.abs() <= rbbox[:, 3] / 2) & (y.abs() <= rbbox[:, 4] / 2) & (z.abs() <= rbbox[:, 5] / 2)


class BackgroundPointsFilter(object):
    def __init__(self, bbox_enlarge_range):
        if isinstance(bbox_enlarge_range, float):
            bbox_enlarge_range = [bbox_enlarge_range] * 3
        self.bbox_enlarge_range = torch.tensor(bbox_enlarge_range, dtype=torch.float32)[None, :]

    def __call__(self, input_dict):
        points = input_dict['points']
        gt_bboxes_3d = input_dict['gt_bboxes_3d']

        # avoid groundtruth being modified
        gt_bboxes_3d_np = gt_bboxes_3d.tensor.clone()
        gt_bboxes_3d_np[:, :3] = gt_bboxes_3d.gravity_center.clone()
        enlarged_gt_bboxes_3d = gt_bboxes_3d_np.clone()
        enlarged_gt_bboxes_3d[:, 3:6] += self.bbox_enlarge_range
        points_numpy = points.tensor.clone()
        foreground_masks = points_in_rbbox(points_numpy, gt_bboxes_3d_np)
        enlarge_foreground_masks = points_in_rbbox(points_numpy, enlarged_gt_bboxes_3d)
        foreground_masks = foreground_masks.any(1)
        enlarge_foreground_masks = enlarge_foreground_masks.any(1)
        valid_masks = ~torch.logical_and(~foreground_masks, enlarge_foreground_masks)

        input_dict['points'] = points[valid_masks]
        return input_dict


def main():
    gt_bboxes_3d = LiDARInstance3DBoxes(torch.tensor([
        [10.0, 2.0, -1.6, 3.9, 1.6, 1.5, 0.3],
        [20.0, -4.0, -1.7, 4.2, 1.8, 1.6, math.pi / 2],
    ]))
    points = LiDARPoints(torch.cat([torch.randn(64, 3) * 3 + torch.tensor([10.0, 2.0, -1.0]),
                                    torch.randn(64, 3) * 3 + torch.tensor([20.0, -4.0, -1.0])]))
    input_dict = {'points': points, 'gt_bboxes_3d': gt_bboxes_3d}
    input_dict = BackgroundPointsFilter(0.5)(input_dict)
    # downstream (e.g. the 3DSSD target assigner) reads the bottom-centered gt boxes
    gt_bottom_z = input_dict['gt_bboxes_3d'].tensor[:, 2].clone()
    return gt_bottom_z, input_dict['points'].tensor


gt_bottom_z, kept_points = main()

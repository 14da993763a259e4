# label: hazard silent
# why: rbbox_overlaps clamps rows of its arguments in place (bboxes.contiguous() returns the same tensor), so the assigner's IoU call silently rewrites the caller's gt boxes and anchors that are then used to build regression targets.
# source: https://github.com/open-mmlab/mmrotate/pull/155 (commit e85805a877ead7149329b09e914032a7ecabcf56)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def box_iou_rotated(bboxes1, bboxes2, mode='iou', aligned=False):
    # stand-in for the mmcv CUDA op: axis-aligned IoU of the (cx, cy, w, h) part
    b1 = torch.cat([bboxes1[:, :2] - bboxes1[:, 2:4] / 2, bboxes1[:, :2] + bboxes1[:, 2:4] / 2], 1)
    b2 = torch.cat([bboxes2[:, :2] - bboxes2[:, 2:4] / 2, bboxes2[:, :2] + bboxes2[:, 2:4] / 2], 1)
    lt = torch.max(b1[:, None, :2], b2[None, :, :2])
    rb = torch.min(b1[:, None, 2:], b2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    overlap = wh[..., 0] * wh[..., 1]
    area1 = bboxes1[:, 2] * bboxes1[:, 3]
    area2 = bboxes2[:, 2] * bboxes2[:, 3]
    return overlap / (area1[:, None] + area2[None, :] - overlap)


def rbbox_overlaps(bboxes1, bboxes2, mode='iou', is_aligned=False):
    assert mode in ['iou', 'iof']
    assert (bboxes1.size(-1) == 5 or bboxes1.size(0) == 0)
    assert (bboxes2.size(-1) == 5 or bboxes2.size(0) == 0)

    # resolve `rbbox_overlaps` abnormal when input rbbox is too small.
    bboxes1[2:4].clamp_(min=1e-3)  # <-- IPL004: clamps the caller's gt boxes in place
    bboxes2[2:4].clamp_(min=1e-3)  # <-- IPL004: clamps the caller's anchors in place

    rows = bboxes1.size(0)
    cols = bboxes2.size(0)
    if rows * cols == 0:
        return bboxes1.new(rows, cols)
    return box_iou_rotated(bboxes1, bboxes2, mode, is_aligned)


class RBboxOverlaps2D(object):
    def __call__(self, bboxes1, bboxes2, mode='iou', is_aligned=False):
        if bboxes2.size(-1) == 6:
            bboxes2 = bboxes2[..., :5]
        if bboxes1.size(-1) == 6:
            bboxes1 = bboxes1[..., :5]
        return rbbox_overlaps(bboxes1.contiguous(), bboxes2.contiguous(), mode, is_aligned)


class MaxIoUAssigner(object):
    def __init__(self, pos_iou_thr=0.3):
        self.pos_iou_thr = pos_iou_thr
        self.iou_calculator = RBboxOverlaps2D()

    def assign(self, bboxes, gt_bboxes):
        overlaps = self.iou_calculator(gt_bboxes, bboxes)
        max_overlaps, argmax_overlaps = overlaps.max(dim=0)
        pos = max_overlaps >= self.pos_iou_thr
        return argmax_overlaps, pos


def delta_xywha_encode(proposals, gt):
    dx = (gt[:, 0] - proposals[:, 0]) / proposals[:, 2]
    dy = (gt[:, 1] - proposals[:, 1]) / proposals[:, 3]
    dw = torch.log(gt[:, 2] / proposals[:, 2])
    dh = torch.log(gt[:, 3] / proposals[:, 3])
    da = gt[:, 4] - proposals[:, 4]
    return torch.stack([dx, dy, dw, dh, da], -1)


anchors = torch.tensor([[2.0, 2.0, 4.0, 4.0, 0.0],
                        [6.0, 2.0, 4.0, 4.0, 0.0],
                        [2.0, 6.0, 4.0, 4.0, -0.4],
                        [6.0, 6.0, 4.0, 4.0, -0.2],
                        [4.0, 4.0, 6.0, 6.0, 0.3]])
gt_bboxes = torch.tensor([[2.5, 2.0, 3.0, 4.0, 0.1],
                          [6.0, 6.5, 4.0, 3.0, -0.3],
                          [3.0, 5.5, 4.0, 5.0, -0.5],
                          [4.5, 4.0, 5.0, 6.0, -0.1]])

reg_head = nn.Linear(8, 5)
feats = torch.randn(5, 8)

assigner = MaxIoUAssigner()
assigned_gt_inds, pos = assigner.assign(anchors, gt_bboxes)
bbox_targets = delta_xywha_encode(anchors[pos], gt_bboxes[assigned_gt_inds[pos]])
bbox_pred = reg_head(feats)[pos]
loss_bbox = F.smooth_l1_loss(bbox_pred, bbox_targets)
loss_bbox.backward()

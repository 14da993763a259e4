# label: hazard silent
# why: rbbox_overlaps clamps the widths/heights of its inputs in place; .contiguous() returns the same tensors, so the assigner's gt boxes are silently altered before the bbox coder encodes the regression targets from them.
# source: https://github.com/open-mmlab/mmrotate/commit/31725aec8680e51cece2c10b9ee14f5aa04f53b4
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def box_iou_rotated(bboxes1, bboxes2, mode="iou", aligned=False):
    # axis-aligned stand-in for the mmcv op (angles ignored)
    b1 = torch.cat([bboxes1[:, :2] - bboxes1[:, 2:4] / 2, bboxes1[:, :2] + bboxes1[:, 2:4] / 2], dim=1)
    b2 = torch.cat([bboxes2[:, :2] - bboxes2[:, 2:4] / 2, bboxes2[:, :2] + bboxes2[:, 2:4] / 2], dim=1)
    lt = torch.max(b1[:, None, :2], b2[None, :, :2])
    rb = torch.min(b1[:, None, 2:], b2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    overlap = wh[..., 0] * wh[..., 1]
    area1 = bboxes1[:, 2] * bboxes1[:, 3]
    area2 = bboxes2[:, 2] * bboxes2[:, 3]
    return overlap / (area1[:, None] + area2[None, :] - overlap)


def rbbox_overlaps(bboxes1, bboxes2, mode="iou", is_aligned=False):
    assert mode in ["iou", "iof"]
    assert bboxes1.size(-1) == 5 or bboxes1.size(0) == 0
    assert bboxes2.size(-1) == 5 or bboxes2.size(0) == 0

    # resolve `rbbox_overlaps` abnormal when input rbbox is too small.
    bboxes1[:, 2:4].clamp_(min=1e-3)  # <-- IPL004: clamps the caller's gt boxes in place
    bboxes2[:, 2:4].clamp_(min=1e-3)  # <-- IPL004: clamps the caller's anchors in place

    rows = bboxes1.size(0)
    cols = bboxes2.size(0)
    if rows * cols == 0:
        return bboxes1.new(rows, 1) if is_aligned else bboxes1.new(rows, cols)
    return box_iou_rotated(bboxes1, bboxes2, mode, is_aligned)


class RBboxOverlaps2D(object):
    def __call__(self, bboxes1, bboxes2, mode="iou", is_aligned=False, version="oc"):
        assert bboxes1.size(-1) in [0, 5, 6]
        assert bboxes2.size(-1) in [0, 5, 6]
        if bboxes2.size(-1) == 6:
            bboxes2 = bboxes2[..., :5]
        if bboxes1.size(-1) == 6:
            bboxes1 = bboxes1[..., :5]
        return rbbox_overlaps(bboxes1.contiguous(), bboxes2.contiguous(), mode, is_aligned)


class MaxIoUAssigner:
    def __init__(self, pos_iou_thr=0.3):
        self.pos_iou_thr = pos_iou_thr
        self.iou_calculator = RBboxOverlaps2D()

    def assign(self, bboxes, gt_bboxes):
        overlaps = self.iou_calculator(gt_bboxes, bboxes)
        max_overlaps, argmax_overlaps = overlaps.max(dim=0)
        pos_inds = torch.nonzero(max_overlaps >= self.pos_iou_thr).squeeze(1)
        return pos_inds, argmax_overlaps[pos_inds]


def delta_encode(proposals, gt):
    dx = (gt[:, 0] - proposals[:, 0]) / proposals[:, 2]
    dy = (gt[:, 1] - proposals[:, 1]) / proposals[:, 3]
    dw = torch.log(gt[:, 2] / proposals[:, 2])
    dh = torch.log(gt[:, 3] / proposals[:, 3])
    da = gt[:, 4] - proposals[:, 4]
    return torch.stack([dx, dy, dw, dh, da], dim=-1)


reg_conv = nn.Conv2d(4, 5 * 2, 1)
assigner = MaxIoUAssigner()
feats = torch.randn(1, 4, 2, 2)
anchors = torch.tensor([[4.0, 4.0, 8.0, 0.0008, 0.0], [4.0, 4.0, 8.0, 2.0, 0.0], [12.0, 4.0, 8.0, 4.0, 0.0],
                        [4.0, 12.0, 4.0, 8.0, 0.0], [12.0, 12.0, 8.0, 8.0, 0.0], [12.0, 12.0, 4.0, 4.0, 0.0],
                        [4.0, 4.0, 4.0, 4.0, 0.0], [8.0, 8.0, 8.0, 8.0, 0.0]])
gt_bboxes = torch.tensor([[4.5, 4.0, 7.0, 0.0005, 0.1], [11.0, 12.5, 7.0, 6.0, -0.1]])

pos_inds, pos_assigned_gt_inds = assigner.assign(anchors, gt_bboxes)
bbox_pred = reg_conv(feats).permute(0, 2, 3, 1).reshape(-1, 5)
pos_bbox_targets = delta_encode(anchors[pos_inds], gt_bboxes[pos_assigned_gt_inds])
loss_bbox = F.smooth_l1_loss(bbox_pred[pos_inds], pos_bbox_targets, beta=1.0 / 9.0)
loss_bbox.backward()

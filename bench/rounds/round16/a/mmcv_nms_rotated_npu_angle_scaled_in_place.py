# label: hazard silent
# why: with clockwise=True nms_rotated sets `dets_cw = dets` (an alias), and the NPU branch converts the angle column to degrees with `dets_cw[i][4] *= coefficient`, so the caller's rotated boxes and the returned kept boxes come back with angles multiplied by 57.3.
# source: https://github.com/open-mmlab/mmcv/commit/c38593d25ec5bab75c4b4c8ad8ca4ac83719ac1a
import math

import torch

torch.manual_seed(0)


def _rotated_nms_kernel(dets_deg, scores, iou_threshold):
    # stand-in for ext_module.nms_rotated on NPU: greedy NMS on the boxes' circumscribed circles
    order = scores.argsort(descending=True)
    keep = []
    suppressed = torch.zeros(len(scores), dtype=torch.bool)
    for i in order.tolist():
        if suppressed[i]:
            continue
        keep.append(i)
        d = (dets_deg[:, :2] - dets_deg[i, :2]).norm(dim=1)
        r = 0.5 * dets_deg[:, 2:4].norm(dim=1)
        overlap = (r + r[i] - d).clamp(min=0) / (2 * torch.maximum(r, r[i]))
        suppressed |= overlap > iou_threshold
    return torch.tensor(keep, dtype=torch.long)


def nms_rotated(dets, scores, iou_threshold, labels=None, clockwise=True, device_type="npu"):
    if dets.shape[0] == 0:
        return dets, None
    if not clockwise:
        flip_mat = dets.new_ones(dets.shape[-1])
        flip_mat[-1] = -1
        dets_cw = dets * flip_mat
    else:
        dets_cw = dets
    if device_type in ("npu", "mlu"):
        if device_type == "npu":
            coefficient = 57.29578  # 180 / PI
            for i in range(dets.size()[0]):
                dets_cw[i][4] *= coefficient  # <-- IPL004: dets_cw aliases the caller's dets (radians to angle)
        keep_inds = _rotated_nms_kernel(dets_cw, scores, iou_threshold)
        dets = torch.cat((dets[keep_inds], scores[keep_inds].reshape(-1, 1)), dim=1)
        return dets, keep_inds
    raise NotImplementedError


# rotated text/aerial boxes (x_ctr, y_ctr, w, h, angle in radians)
boxes = torch.tensor(
    [
        [10.0, 10.0, 8.0, 4.0, 0.3],
        [10.5, 10.2, 8.0, 4.0, 0.35],
        [30.0, 12.0, 6.0, 3.0, -0.5],
        [50.0, 40.0, 10.0, 5.0, math.pi / 4],
    ]
)
scores = torch.tensor([0.9, 0.8, 0.7, 0.6])

kept, keep_inds = nms_rotated(boxes, scores, iou_threshold=0.5)
kept_angles = kept[:, 4].clone()
input_angles = boxes[:, 4].clone()

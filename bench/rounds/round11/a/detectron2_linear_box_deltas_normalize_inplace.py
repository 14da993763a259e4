# label: hazard raises
# why: apply_deltas rescales slices of the ReLU'd deltas in place, but F.relu saved that output for its backward, so the box regression loss cannot backpropagate.
# source: https://github.com/facebookresearch/detectron2/pull/3522
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Box2BoxTransformLinear(object):
    def __init__(self, normalize_by_size=True):
        self.normalize_by_size = normalize_by_size

    def apply_deltas(self, deltas, boxes):
        # Ensure the output is a valid box.
        deltas = F.relu(deltas)
        boxes = boxes.to(deltas.dtype)

        ctr_x = 0.5 * (boxes[:, 0] + boxes[:, 2])
        ctr_y = 0.5 * (boxes[:, 1] + boxes[:, 3])
        if self.normalize_by_size:
            stride_w = boxes[:, 2] - boxes[:, 0]
            stride_h = boxes[:, 3] - boxes[:, 1]
            deltas[:, 0::2] *= stride_w[:, None]  # <-- IPL001: scales the ReLU output (saved for backward) in place
            deltas[:, 1::2] *= stride_h[:, None]  # <-- IPL001: same saved ReLU output scaled again in place
        l = deltas[:, 0::4]
        t = deltas[:, 1::4]
        r = deltas[:, 2::4]
        b = deltas[:, 3::4]

        pred_boxes = torch.zeros_like(deltas)
        pred_boxes[:, 0::4] = ctr_x[:, None] - l  # x1
        pred_boxes[:, 1::4] = ctr_y[:, None] - t  # y1
        pred_boxes[:, 2::4] = ctr_x[:, None] + r  # x2
        pred_boxes[:, 3::4] = ctr_y[:, None] + b  # y2
        return pred_boxes


box_reg = nn.Linear(8, 4)
transform = Box2BoxTransformLinear(normalize_by_size=True)
features = torch.randn(5, 8)
anchors = torch.tensor([[0., 0., 8., 8.], [4., 4., 12., 20.], [2., 0., 6., 4.], [0., 8., 16., 16.], [1., 1., 3., 5.]])
gt_boxes = anchors + torch.randn(5, 4)

pred_deltas = box_reg(features)
pred_boxes = transform.apply_deltas(pred_deltas, anchors)
loss_box_reg = F.smooth_l1_loss(pred_boxes, gt_boxes, beta=0.1)
loss_box_reg.backward()

# label: safe
# why: apply_deltas fills a fresh zeros_like buffer with strided slice assignments of decoded box corners; the buffer is nobody else's and none of the written slices were saved for backward, so the IoU/L1 loss backpropagates correctly into the regression head (the upstream change only removed copy_ nodes for export).
# source: https://github.com/facebookresearch/detectron2/commit/897092db36d9eaf189e54220b613cadb009547ae
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Box2BoxTransform(object):
    def __init__(self, weights, scale_clamp=math.log(1000.0 / 16)):
        self.weights = weights
        self.scale_clamp = scale_clamp

    def apply_deltas(self, deltas, boxes):
        deltas = deltas.float()
        boxes = boxes.to(deltas.dtype)

        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights

        wx, wy, ww, wh = self.weights
        dx = deltas[:, 0::4] / wx
        dy = deltas[:, 1::4] / wy
        dw = deltas[:, 2::4] / ww
        dh = deltas[:, 3::4] / wh

        dw = torch.clamp(dw, max=self.scale_clamp)
        dh = torch.clamp(dh, max=self.scale_clamp)

        pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
        pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
        pred_w = torch.exp(dw) * widths[:, None]
        pred_h = torch.exp(dh) * heights[:, None]

        pred_boxes = torch.zeros_like(deltas)
        pred_boxes[:, 0::4] = pred_ctr_x - 0.5 * pred_w  # x1
        pred_boxes[:, 1::4] = pred_ctr_y - 0.5 * pred_h  # y1
        pred_boxes[:, 2::4] = pred_ctr_x + 0.5 * pred_w  # x2
        pred_boxes[:, 3::4] = pred_ctr_y + 0.5 * pred_h  # y2
        return pred_boxes


num_classes = 3
box_head = nn.Linear(16, num_classes * 4)
transform = Box2BoxTransform(weights=(10.0, 10.0, 5.0, 5.0))

roi_feats = torch.randn(6, 16)
xy = torch.rand(6, 2) * 50
proposals = torch.cat([xy, xy + 10 + torch.rand(6, 2) * 40], dim=1)
gt_boxes = proposals + torch.randn(6, 4)

deltas = box_head(roi_feats)
pred_boxes = transform.apply_deltas(deltas, proposals)
loss = (pred_boxes.view(6, num_classes, 4) - gt_boxes[:, None]).abs().mean()
loss.backward()
head_grad = box_head.weight.grad.clone()

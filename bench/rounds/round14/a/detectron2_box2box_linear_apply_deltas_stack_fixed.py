# label: safe
# why: the fix scales the deltas out of place (deltas = deltas * strides), so the unbind views of the predictions are never written and the giou loss backpropagates.
# source: https://github.com/facebookresearch/detectron2/commit/74795a3d0dbd954686f6441c6ed297d2b71cd483 (fixed version)
from typing import List

import torch
import torch.nn as nn

torch.manual_seed(0)


def cat(tensors: List[torch.Tensor], dim: int = 0):
    if len(tensors) == 1:
        return tensors[0]
    return torch.cat(tensors, dim)


def giou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xkis1 = torch.max(x1, x1g)
    ykis1 = torch.max(y1, y1g)
    xkis2 = torch.min(x2, x2g)
    ykis2 = torch.min(y2, y2g)
    intsctk = torch.zeros_like(x1)
    mask = (ykis2 > ykis1) & (xkis2 > xkis1)
    intsctk[mask] = (xkis2[mask] - xkis1[mask]) * (ykis2[mask] - ykis1[mask])
    unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk
    iouk = intsctk / (unionk + eps)
    xc1 = torch.min(x1, x1g)
    yc1 = torch.min(y1, y1g)
    xc2 = torch.max(x2, x2g)
    yc2 = torch.max(y2, y2g)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    loss = 1 - (iouk - ((area_c - unionk) / (area_c + eps)))
    return loss.sum() if reduction == "sum" else loss


class Box2BoxTransformLinear(object):
    def __init__(self, normalize_by_size=True):
        self.normalize_by_size = normalize_by_size

    def apply_deltas(self, deltas, boxes):
        boxes = boxes.to(deltas.dtype)

        ctr_x = 0.5 * (boxes[:, 0] + boxes[:, 2])
        ctr_y = 0.5 * (boxes[:, 1] + boxes[:, 3])
        if self.normalize_by_size:
            stride_w = boxes[:, 2] - boxes[:, 0]
            stride_h = boxes[:, 3] - boxes[:, 1]
            strides = torch.stack([stride_w, stride_h, stride_w, stride_h]).permute(1, 0)
            deltas = deltas * strides

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


def _dense_box_regression_loss(anchors, box2box_transform, pred_anchor_deltas, gt_boxes, fg_mask, box_reg_loss_type="smooth_l1"):
    anchors = torch.cat(anchors)  # (R, 4)
    if box_reg_loss_type == "giou":
        pred_boxes = [box2box_transform.apply_deltas(k, anchors) for k in cat(pred_anchor_deltas, dim=1)]
        loss_box_reg = giou_loss(torch.stack(pred_boxes)[fg_mask], torch.stack(gt_boxes)[fg_mask], reduction="sum")
    else:
        raise ValueError(f"Invalid dense box regression loss type '{box_reg_loss_type}'")
    return loss_box_reg


class FCOSHead(nn.Module):
    def __init__(self, in_channels=4):
        super().__init__()
        self.bbox_pred = nn.Conv2d(in_channels, 4, 3, padding=1)

    def forward(self, features):
        return [torch.relu(self.bbox_pred(x)) for x in features]


def anchors_for(feat, stride):
    h, w = feat.shape[-2:]
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij")
    cx, cy = (xs.reshape(-1) + 0.5) * stride, (ys.reshape(-1) + 0.5) * stride
    return torch.stack([cx - stride / 2, cy - stride / 2, cx + stride / 2, cy + stride / 2], dim=1)


head = FCOSHead()
features = [torch.randn(2, 4, 4, 4), torch.randn(2, 4, 2, 2)]
strides = [8, 16]
pred_deltas = head(features)
pred_anchor_deltas = [p.permute(0, 2, 3, 1).reshape(p.shape[0], -1, 4) for p in pred_deltas]
anchors = [anchors_for(f, s) for f, s in zip(features, strides)]
R = sum(a.shape[0] for a in anchors)
gt_boxes = [torch.tensor([[4.0, 4.0, 20.0, 24.0]]).expand(R, 4), torch.tensor([[10.0, 2.0, 30.0, 14.0]]).expand(R, 4)]
fg_mask = torch.zeros(2, R, dtype=torch.bool)
fg_mask[:, :6] = True
loss_box_reg = _dense_box_regression_loss(anchors, Box2BoxTransformLinear(), pred_anchor_deltas, gt_boxes, fg_mask, box_reg_loss_type="giou")
loss_box_reg.backward()

# label: safe no-twin
# why: Boxes.clip clamps column views of the predicted box tensor in place; nothing upstream saved those values for backward, so the clamped gradient equals an out-of-place rebuild (the upstream PR replaced it only for TVM/ONNX export).
# source: https://github.com/facebookresearch/detectron2/pull/2716
import torch
import torch.nn as nn

torch.manual_seed(0)


class Boxes:
    def __init__(self, tensor):
        self.tensor = tensor

    def clip(self, box_size):
        assert torch.isfinite(self.tensor).all(), "Box tensor contains infinite or NaN!"
        h, w = box_size
        self.tensor[:, 0].clamp_(min=0, max=w)
        self.tensor[:, 1].clamp_(min=0, max=h)
        self.tensor[:, 2].clamp_(min=0, max=w)
        self.tensor[:, 3].clamp_(min=0, max=h)

    def area(self):
        box = self.tensor
        return (box[:, 2] - box[:, 0]) * (box[:, 3] - box[:, 1])


class Box2BoxTransform:
    def __init__(self, weights=(10.0, 10.0, 5.0, 5.0)):
        self.weights = weights

    def apply_deltas(self, deltas, boxes):
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx = deltas[:, 0] / wx
        dy = deltas[:, 1] / wy
        dw = deltas[:, 2] / ww
        dh = deltas[:, 3] / wh
        pred_ctr_x = dx * widths + ctr_x
        pred_ctr_y = dy * heights + ctr_y
        pred_w = torch.exp(dw) * widths
        pred_h = torch.exp(dh) * heights
        x1 = pred_ctr_x - 0.5 * pred_w
        y1 = pred_ctr_y - 0.5 * pred_h
        x2 = pred_ctr_x + 0.5 * pred_w
        y2 = pred_ctr_y + 0.5 * pred_h
        return torch.stack((x1, y1, x2, y2), dim=-1)


box_head = nn.Linear(6, 4)
transform = Box2BoxTransform()
proposals = torch.tensor([[0.0, 0.0, 6.0, 5.0], [2.0, 3.0, 9.0, 8.0], [5.0, 1.0, 7.0, 7.0]])
roi_feats = torch.randn(3, 6) * 3
deltas = box_head(roi_feats) * 5
pred_boxes = Boxes(transform.apply_deltas(deltas, proposals))
pred_boxes.clip((8, 8))
loss = pred_boxes.area().sum() + pred_boxes.tensor.sum()
loss.backward()

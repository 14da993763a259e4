# label: hazard raises
# why: Box2BoxTransformRotated.apply_deltas unbinds the predicted deltas and divides the unbind outputs in place (dx.div_(wx)), which autograd forbids for multi-output views of a tensor that requires grad (and otherwise mutates the caller's deltas).
# source: https://github.com/facebookresearch/detectron2/pull/760 (commit ee0cbd8c67622ff2753493ce0dcfeb3e3dd9945e)
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


class Box2BoxTransformRotated(object):
    def __init__(self, weights, scale_clamp=math.log(1000.0 / 16)):
        self.weights = weights
        self.scale_clamp = scale_clamp

    def apply_deltas(self, deltas, boxes):
        assert deltas.shape[1] == 5 and boxes.shape[1] == 5
        boxes = boxes.to(deltas.dtype)

        ctr_x, ctr_y, widths, heights, angles = torch.unbind(boxes, dim=1)
        wx, wy, ww, wh, wa = self.weights
        dx, dy, dw, dh, da = torch.unbind(deltas, dim=1)

        dx.div_(wx)  # <-- IPL001: in-place division of an unbind output of the predicted deltas
        dy.div_(wy)  # <-- IPL001: same
        dw.div_(ww)  # <-- IPL001: same
        dh.div_(wh)  # <-- IPL001: same
        da.div_(wa)  # <-- IPL001: same

        dw = torch.clamp(dw, max=self.scale_clamp)
        dh = torch.clamp(dh, max=self.scale_clamp)

        pred_boxes = torch.zeros_like(deltas)
        pred_boxes[:, 0] = dx * widths + ctr_x
        pred_boxes[:, 1] = dy * heights + ctr_y
        pred_boxes[:, 2] = torch.exp(dw) * widths
        pred_boxes[:, 3] = torch.exp(dh) * heights
        pred_angle = da * 180.0 / math.pi + angles
        pred_angle = (pred_angle + 180.0) % 360.0 - 180.0
        pred_boxes[:, 4] = pred_angle
        return pred_boxes


class StandardRPNHead(nn.Module):
    def __init__(self, in_channels, num_anchors, box_dim=5):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, in_channels, 3, padding=1)
        self.objectness_logits = nn.Conv2d(in_channels, num_anchors, 1)
        self.anchor_deltas = nn.Conv2d(in_channels, num_anchors * box_dim, 1)

    def forward(self, features):
        pred_objectness_logits, pred_anchor_deltas = [], []
        for x in features:
            t = torch.relu(self.conv(x))
            pred_objectness_logits.append(self.objectness_logits(t))
            pred_anchor_deltas.append(self.anchor_deltas(t))
        return pred_objectness_logits, pred_anchor_deltas


class RRPN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rpn_head = StandardRPNHead(4, num_anchors=2)
        self.box2box_transform = Box2BoxTransformRotated(weights=(1.0, 1.0, 1.0, 1.0, 1.0))

    def _decode_proposals(self, anchors, pred_anchor_deltas):
        N = pred_anchor_deltas[0].shape[0]
        proposals = []
        for anchors_i, pred_anchor_deltas_i in zip(anchors, pred_anchor_deltas):
            B = anchors_i.size(1)
            pred_anchor_deltas_i = pred_anchor_deltas_i.reshape(-1, B)
            anchors_i = anchors_i.unsqueeze(0).expand(N, -1, -1).reshape(-1, B)
            proposals_i = self.box2box_transform.apply_deltas(pred_anchor_deltas_i, anchors_i)
            proposals.append(proposals_i.view(N, -1, B))
        return proposals

    def forward(self, features, anchors):
        pred_objectness_logits, pred_anchor_deltas = self.rpn_head(features)
        pred_anchor_deltas = [
            x.view(x.shape[0], -1, 5, x.shape[-2], x.shape[-1]).permute(0, 3, 4, 1, 2).flatten(1, -2)
            for x in pred_anchor_deltas
        ]
        return self._decode_proposals(anchors, pred_anchor_deltas)


rrpn = RRPN()
features = [torch.randn(1, 4, 3, 3)]
anchors = [torch.cat([torch.rand(18, 2) * 10, torch.full((18, 2), 4.0), torch.zeros(18, 1)], 1)]
proposals = rrpn(features, anchors)
loss = proposals[0][..., 2:4].log().sum()
loss.backward()

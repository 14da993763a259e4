# label: hazard silent
# why: RetinaHeadLite.decode divides the caller's deltas by the box-coder weights in place; the smooth-L1 loss against encoded targets then reads the rescaled deltas
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RetinaHeadLite(nn.Module):
    def __init__(self, ch=8, num_anchors=2):
        super().__init__()
        self.reg = nn.Conv2d(ch, num_anchors * 4, 3, padding=1)
        self.scale_clamp = math.log(1000.0 / 16)
        self.register_buffer("bbox_weights", torch.tensor([10.0, 10.0, 5.0, 5.0]))

    def decode(self, deltas, anchors):
        deltas.div_(self.bbox_weights)  # <-- IPL004
        ctr = anchors[:, :2] + deltas[:, :2] * anchors[:, 2:]
        wh = anchors[:, 2:] * deltas[:, 2:].clamp(max=self.scale_clamp).exp()
        return torch.cat([ctr - 0.5 * wh, ctr + 0.5 * wh], dim=1)

    def forward(self, feat, anchors):
        deltas = self.reg(feat).permute(0, 2, 3, 1).reshape(-1, 4)
        boxes = self.decode(deltas, anchors)
        return deltas, boxes


head = RetinaHeadLite()
feat = torch.randn(1, 8, 3, 3)
n = 3 * 3 * 2
anchors = torch.cat([torch.rand(n, 2) * 32, torch.full((n, 2), 8.0)], dim=1)
target_deltas = torch.randn(n, 4)  # encoded with the (10, 10, 5, 5) weights
gt_boxes = torch.cat([anchors[:, :2] - 4, anchors[:, :2] + 4], dim=1)

deltas, boxes = head(feat, anchors)
reg_loss = F.smooth_l1_loss(deltas, target_deltas, beta=1.0 / 9)
box_loss = (boxes - gt_boxes).abs().mean() / 32
loss = reg_loss + box_loss
loss.backward()
grad_reg = head.reg.weight.grad.clone()
pred_boxes = boxes.detach()

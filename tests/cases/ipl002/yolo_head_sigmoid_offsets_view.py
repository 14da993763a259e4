# label: hazard silent
# why: xy_logits is a view of pred; overwriting pred[..., :2] with its sigmoid makes the BCE-with-logits loss read probabilities instead of raw logits
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DetectHead(nn.Module):
    def __init__(self, in_ch, num_anchors=2, num_classes=3):
        super().__init__()
        self.na, self.no = num_anchors, 5 + num_classes
        self.conv = nn.Conv2d(in_ch, num_anchors * self.no, 1)

    def forward(self, feat):
        b, _, h, w = feat.shape
        pred = self.conv(feat).view(b, self.na, self.no, h, w).permute(0, 1, 3, 4, 2)
        return pred


head = DetectHead(4)
feat = torch.randn(1, 4, 3, 3)
pred = head(feat)
xy_logits = pred[..., :2]
pred[..., :2] = pred[..., :2].sigmoid()  # <-- IPL002
grid = torch.stack(torch.meshgrid(torch.arange(3.0), torch.arange(3.0), indexing="ij"), -1)
centers = (pred[..., :2] + grid) / 3.0

target_xy = torch.rand_like(xy_logits)
loss_xy = F.binary_cross_entropy_with_logits(xy_logits, target_xy)
loss_wh = pred[..., 2:4].pow(2).mean()
loss = loss_xy + loss_wh + centers.mean()
loss.backward()
conv_grad = head.conv.weight.grad

# label: safe
# why: decode() turns (cx, cy, w, h) into corners with in-place slice updates on the fresh cat() output; neither cat, the scalar division nor the adds save it, so the GIoU loss trains correctly (the maintainer's answer: "This inplace operation is correct")
# source: https://github.com/dlyldxwl/Stronger-One-stage-detector-with-much-Tricks/issues/1 (decode() in box_utils.py, as in https://github.com/Zzh-tju/DIoU-SSD-pytorch/blob/master/utils/box/box_utils.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


def decode(loc, priors, variances):
    boxes = torch.cat((
        priors[:, :2] + loc[:, :2] * variances[0] * priors[:, 2:],
        priors[:, 2:] * torch.exp(loc[:, 2:] * variances[1])), 1)
    boxes[:, :2] -= boxes[:, 2:] / 2
    boxes[:, 2:] += boxes[:, :2]
    return boxes


def bbox_overlaps_giou(bboxes1, bboxes2):
    area1 = (bboxes1[:, 2] - bboxes1[:, 0]) * (bboxes1[:, 3] - bboxes1[:, 1])
    area2 = (bboxes2[:, 2] - bboxes2[:, 0]) * (bboxes2[:, 3] - bboxes2[:, 1])
    inter_max_xy = torch.min(bboxes1[:, 2:], bboxes2[:, 2:])
    inter_min_xy = torch.max(bboxes1[:, :2], bboxes2[:, :2])
    out_max_xy = torch.max(bboxes1[:, 2:], bboxes2[:, 2:])
    out_min_xy = torch.min(bboxes1[:, :2], bboxes2[:, :2])
    inter = torch.clamp((inter_max_xy - inter_min_xy), min=0)
    inter_area = inter[:, 0] * inter[:, 1]
    outer = torch.clamp((out_max_xy - out_min_xy), min=0)
    outer_area = outer[:, 0] * outer[:, 1]
    union = area1 + area2 - inter_area
    closure = outer_area
    ious = inter_area / union - (closure - union) / closure
    ious = torch.clamp(ious, min=-1.0, max=1.0)
    return ious


class IouLoss(nn.Module):
    def __init__(self, variances=(0.1, 0.2)):
        super(IouLoss, self).__init__()
        self.variances = variances

    def forward(self, loc_p, loc_t, prior_data):
        num = loc_p.shape[0]
        decoded_boxes = decode(loc_p, prior_data, self.variances)
        loss = torch.sum(1.0 - bbox_overlaps_giou(decoded_boxes, loc_t))
        return loss / num


loc_layer = nn.Conv2d(8, 4, 3, padding=1)
feat = torch.randn(1, 8, 3, 3)
loc_data = loc_layer(feat).permute(0, 2, 3, 1).reshape(-1, 4)
cxcy = torch.rand(9, 2)
priors = torch.cat([cxcy, torch.full((9, 2), 0.3)], 1)
truths_xy = torch.rand(9, 2) * 0.5
loc_t = torch.cat([truths_xy, truths_xy + 0.3], 1)
pos = torch.tensor([1, 0, 1, 1, 0, 0, 1, 1, 0], dtype=torch.bool)

gious = IouLoss()
loss_l = gious(loc_data[pos], loc_t[pos], priors[pos])
loss_l.backward()

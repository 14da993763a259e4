# label: safe
# why: decode() shifts the corners of a freshly concatenated box tensor in place, hard-negative mining zeroes a loss map used only for sorting, and the final /= N divides fresh results, so no saved tensor is touched
# source: https://github.com/JaryHuang/awesome_SSD_FPN_GIoU/blob/0fe8d71a5b0a302706b7aaa3d49e2b65b1d0f454/utils/loss/multibox_loss.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def decode(loc, priors, variances):
    boxes = torch.cat((
        priors[:, :2] + loc[:, :2] * variances[0] * priors[:, 2:],
        priors[:, 2:] * torch.exp(loc[:, 2:] * variances[1])), 1)
    boxes[:, :2] -= boxes[:, 2:] / 2
    boxes[:, 2:] += boxes[:, :2]
    return boxes


def bbox_overlaps_giou(bboxes1, bboxes2):
    w1 = bboxes1[:, 2] - bboxes1[:, 0]
    h1 = bboxes1[:, 3] - bboxes1[:, 1]
    w2 = bboxes2[:, 2] - bboxes2[:, 0]
    h2 = bboxes2[:, 3] - bboxes2[:, 1]
    area1 = w1 * h1
    area2 = w2 * h2
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
    ious = inter_area / union
    gious = ious - (closure - union) / closure
    return torch.clamp(gious, min=-1.0, max=1.0)


def log_sum_exp(x):
    x_max = x.data.max()
    return torch.log(torch.sum(torch.exp(x - x_max), 1, keepdim=True)) + x_max


class GiouLoss(nn.Module):
    def __init__(self, variances):
        super().__init__()
        self.variances = variances

    def forward(self, loc_p, loc_t, prior_data):
        decoded_boxes = decode(loc_p, prior_data, self.variances)
        gious = 1.0 - bbox_overlaps_giou(decoded_boxes, loc_t)
        return 5 * torch.sum(gious)


class MultiBoxLoss(nn.Module):
    def __init__(self, num_classes=3, negpos_ratio=3, variance=(0.1, 0.2)):
        super().__init__()
        self.num_classes = num_classes
        self.negpos_ratio = negpos_ratio
        self.gious = GiouLoss(variance)

    def forward(self, predictions, loc_t, conf_t):
        loc_data, conf_data, priors = predictions
        num = loc_data.size(0)
        pos = conf_t > 0
        num_pos = pos.sum(dim=1, keepdim=True)
        pos_idx = pos.unsqueeze(pos.dim()).expand_as(loc_data)
        loc_p = loc_data[pos_idx].view(-1, 4)
        loc_t = loc_t[pos_idx].view(-1, 4)
        giou_priors = priors.data.unsqueeze(0).expand_as(loc_data)
        loss_l = self.gious(loc_p, loc_t, giou_priors[pos_idx].view(-1, 4))

        batch_conf = conf_data.view(-1, self.num_classes)
        loss_c = log_sum_exp(batch_conf) - batch_conf.gather(1, conf_t.view(-1, 1))
        loss_c = loss_c.view(num, -1)
        loss_c[pos] = 0
        _, loss_idx = loss_c.sort(1, descending=True)
        _, idx_rank = loss_idx.sort(1)
        num_pos = pos.long().sum(1, keepdim=True)
        num_neg = torch.clamp(self.negpos_ratio * num_pos, max=pos.size(1) - 1)
        neg = idx_rank < num_neg.expand_as(idx_rank)

        pos_idx = pos.unsqueeze(2).expand_as(conf_data)
        neg_idx = neg.unsqueeze(2).expand_as(conf_data)
        conf_p = conf_data[(pos_idx + neg_idx).gt(0)].view(-1, self.num_classes)
        targets_weighted = conf_t[(pos + neg).gt(0)]
        loss_c = F.cross_entropy(conf_p, targets_weighted, reduction='sum')

        N = num_pos.data.sum().double()
        loss_l = loss_l.double()
        loss_c = loss_c.double()
        loss_l /= N
        loss_c /= N
        return loss_l, loss_c


num_priors = 12
priors = torch.cat([torch.rand(num_priors, 2), torch.rand(num_priors, 2) * 0.3 + 0.1], dim=1)
head = nn.Linear(8, 4 + 3)
feats = torch.randn(2, num_priors, 8)
out = head(feats)
loc_data, conf_data = out[..., :4], out[..., 4:]
gt_xy = torch.rand(2, num_priors, 2) * 0.5
loc_t = torch.cat([gt_xy, gt_xy + 0.3], dim=-1)
conf_t = torch.randint(0, 3, (2, num_priors))
criterion = MultiBoxLoss()
loss_l, loss_c = criterion((loc_data, conf_data, priors), loc_t, conf_t)
(loss_l + loss_c).backward()

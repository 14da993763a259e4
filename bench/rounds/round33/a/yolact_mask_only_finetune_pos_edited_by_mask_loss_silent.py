# label: hazard silent
# why: With box training off (mask-only fine-tuning, cfg.train_boxes = False) nothing saves `pos`, so the `pos[idx][idx_t[idx] == i] = 0` that lincomb_mask_loss writes into its caller's positive mask no longer crashes: forward silently reuses the edited mask for hard negative mining, the confidence targets and the normaliser N.
# source: https://github.com/dbolya/yolact/commit/581500e217e1d22adbc0e43b0b3af1941f70f66a
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class Config:
    mask_type = 'lincomb'
    mask_dim = 4
    train_boxes = False
    train_masks = True
    use_yolo_regressors = False
    use_prediction_matching = False
    mask_proto_loss = None
    mask_proto_binarize_downsampled_gt = True
    mask_proto_reweight_mask_loss = False
    mask_proto_normalize_mask_loss_by_sqrt_area = False
    mask_proto_crop = True
    masks_to_train = 100
    mask_proto_mask_activation = staticmethod(torch.sigmoid)


cfg = Config()


def point_form(boxes):
    return torch.cat((boxes[:, :2] - boxes[:, 2:] / 2,
                      boxes[:, :2] + boxes[:, 2:] / 2), 1)


def intersect(box_a, box_b):
    A = box_a.size(0)
    B = box_b.size(0)
    max_xy = torch.min(box_a[:, 2:].unsqueeze(1).expand(A, B, 2),
                       box_b[:, 2:].unsqueeze(0).expand(A, B, 2))
    min_xy = torch.max(box_a[:, :2].unsqueeze(1).expand(A, B, 2),
                       box_b[:, :2].unsqueeze(0).expand(A, B, 2))
    inter = torch.clamp((max_xy - min_xy), min=0)
    return inter[:, :, 0] * inter[:, :, 1]


def jaccard(box_a, box_b, iscrowd=False):
    inter = intersect(box_a, box_b)
    area_a = ((box_a[:, 2] - box_a[:, 0]) * (box_a[:, 3] - box_a[:, 1])).unsqueeze(1).expand_as(inter)
    area_b = ((box_b[:, 2] - box_b[:, 0]) * (box_b[:, 3] - box_b[:, 1])).unsqueeze(0).expand_as(inter)
    union = area_a + area_b - inter
    if iscrowd:
        return inter / area_a
    else:
        return inter / union


def match(pos_thresh, neg_thresh, truths, priors, labels, loc_t, conf_t, idx_t, idx, loc_data):
    overlaps = jaccard(truths, decode(loc_data, priors) if cfg.use_prediction_matching else point_form(priors))
    best_prior_overlap, best_prior_idx = overlaps.max(1, keepdim=True)
    best_truth_overlap, best_truth_idx = overlaps.max(0, keepdim=True)
    best_truth_idx.squeeze_(0)
    best_truth_overlap.squeeze_(0)
    best_prior_idx.squeeze_(1)
    best_prior_overlap.squeeze_(1)
    best_truth_overlap.index_fill_(0, best_prior_idx, 2)  # ensure best prior
    for j in range(best_prior_idx.size(0)):
        best_truth_idx[best_prior_idx[j]] = j
    matches = truths[best_truth_idx]
    conf = labels[best_truth_idx] + 1
    conf[best_truth_overlap < pos_thresh] = -1  # label as neutral
    conf[best_truth_overlap < neg_thresh] = 0  # label as background
    loc = encode(matches, priors)
    loc_t[idx] = loc
    conf_t[idx] = conf
    idx_t[idx] = best_truth_idx


def encode(matched, priors):
    variances = [0.1, 0.2]
    g_cxcy = (matched[:, :2] + matched[:, 2:]) / 2 - priors[:, :2]
    g_cxcy /= (variances[0] * priors[:, 2:])
    g_wh = (matched[:, 2:] - matched[:, :2]) / priors[:, 2:]
    g_wh = torch.log(g_wh) / variances[1]
    return torch.cat([g_cxcy, g_wh], 1)


def decode(loc, priors):
    variances = [0.1, 0.2]
    boxes = torch.cat((
        priors[:, :2] + loc[:, :2] * variances[0] * priors[:, 2:],
        priors[:, 2:] * torch.exp(loc[:, 2:] * variances[1])), 1)
    boxes[:, :2] -= boxes[:, 2:] / 2
    boxes[:, 2:] += boxes[:, :2]
    return boxes


def log_sum_exp(x):
    x_max = x.data.max()
    return torch.log(torch.sum(torch.exp(x - x_max), 1)) + x_max


def sanitize_coordinates(_x1, _x2, img_size, cast=True):
    _x1 *= img_size
    _x2 *= img_size
    if cast:
        _x1 = _x1.long()
        _x2 = _x2.long()
    x1 = torch.min(_x1, _x2)
    x2 = torch.max(_x1, _x2)
    x1 = torch.clamp(x1 - 1, min=0)
    x2 = torch.clamp(x2 + 1, max=img_size)
    return x1, x2


class MultiBoxLoss(nn.Module):
    def __init__(self, num_classes, pos_threshold, neg_threshold, negpos_ratio):
        super(MultiBoxLoss, self).__init__()
        self.num_classes = num_classes
        self.pos_threshold = pos_threshold
        self.neg_threshold = neg_threshold
        self.negpos_ratio = negpos_ratio
        self.mask_alpha = 0.2 / cfg.mask_dim
        self.bbox_alpha = 5 if cfg.use_yolo_regressors else 1

    def forward(self, predictions, targets, masks):
        loc_data, conf_data, mask_data, priors, proto_data = predictions

        num = loc_data.size(0)
        priors = priors[:loc_data.size(1), :]
        num_priors = (priors.size(0))

        loc_t = loc_data.new(num, num_priors, 4)
        conf_t = loc_data.new(num, num_priors).long()
        idx_t = loc_data.new(num, num_priors).long()

        for idx in range(num):
            truths = targets[idx][:, :-1].data
            labels = targets[idx][:, -1].data.long()
            defaults = priors.data
            match(self.pos_threshold, self.neg_threshold, truths, defaults, labels,
                  loc_t, conf_t, idx_t, idx, loc_data[idx].detach())

        loc_t = Variable(loc_t, requires_grad=False)
        conf_t = Variable(conf_t, requires_grad=False)
        idx_t = Variable(idx_t, requires_grad=False)

        pos = conf_t > 0
        num_pos = pos.sum(dim=1, keepdim=True)

        # Shape: [batch,num_priors,4]
        pos_idx = pos.unsqueeze(pos.dim()).expand_as(loc_data)

        # Localization Loss (Smooth L1)
        loss_l = 0
        if cfg.train_boxes:
            loc_p = loc_data[pos_idx].view(-1, 4)
            loc_t = loc_t[pos_idx].view(-1, 4)
            loss_l = F.smooth_l1_loss(loc_p, loc_t, reduction='sum') * self.bbox_alpha

        # Mask Loss
        loss_p = 0
        if cfg.train_masks:
            loss_m = self.lincomb_mask_loss(pos, idx_t, loc_data, mask_data, priors, proto_data, masks)
        else:
            loss_m = 0

        # Compute max conf across batch for hard negative mining
        batch_conf = conf_data.view(-1, self.num_classes)
        loss_c = log_sum_exp(batch_conf) - batch_conf[:, 0]

        # Hard Negative Mining
        loss_c = loss_c.view(num, -1)
        loss_c[pos] = 0  # filter out pos boxes
        loss_c[conf_t < 0] = 0  # filter out neutrals (conf_t = -1)
        _, loss_idx = loss_c.sort(1, descending=True)
        _, idx_rank = loss_idx.sort(1)
        num_pos = pos.long().sum(1, keepdim=True)
        num_neg = torch.clamp(self.negpos_ratio * num_pos, max=pos.size(1) - 1)
        neg = idx_rank < num_neg.expand_as(idx_rank)

        # Just in case there aren't enough negatives, don't start using positives as negatives
        neg[pos] = 0
        neg[conf_t < 0] = 0  # Filter out neutrals

        # Confidence Loss Including Positive and Negative Examples
        pos_idx = pos.unsqueeze(2).expand_as(conf_data)
        neg_idx = neg.unsqueeze(2).expand_as(conf_data)
        conf_p = conf_data[(pos_idx + neg_idx).gt(0)].view(-1, self.num_classes)
        targets_weighted = conf_t[(pos + neg).gt(0)].clamp(min=0)
        loss_c = F.cross_entropy(conf_p, targets_weighted, reduction='sum')

        N = num_pos.data.sum().float()
        loss_l /= N
        loss_c /= N
        loss_m /= N
        return loss_l, loss_c, loss_m + loss_p

    def lincomb_mask_loss(self, pos, idx_t, loc_data, mask_data, priors, proto_data, masks,
                          interpolation_mode='bilinear'):
        mask_h = proto_data.size(1)
        mask_w = proto_data.size(2)

        loss_m = 0

        for idx in range(mask_data.size(0)):
            with torch.no_grad():
                downsampled_masks = F.interpolate(masks[idx].unsqueeze(0), (mask_h, mask_w),
                                                  mode=interpolation_mode, align_corners=False).squeeze(0)
                downsampled_masks = downsampled_masks.permute(1, 2, 0).contiguous()

                if cfg.mask_proto_binarize_downsampled_gt:
                    downsampled_masks = downsampled_masks.gt(0.5).float()

                # Get rid of gt masks that are so small they get downsampled away
                very_small_masks = (downsampled_masks.sum(dim=(0, 1)) <= 0.0001)
                for i in range(very_small_masks.size(0)):
                    if very_small_masks[i]:
                        pos[idx][idx_t[idx] == i] = 0  # <-- IPL004

            cur_pos = pos[idx]
            pos_idx_t = idx_t[idx, cur_pos]

            if pos_idx_t.size(0) == 0:
                continue

            pos_bboxes = decode(loc_data[idx, :, :], priors.data)
            pos_bboxes = pos_bboxes[cur_pos, :]

            proto_masks = proto_data[idx]
            proto_coef = mask_data[idx, cur_pos, :]

            num_pos = proto_coef.size(0)
            mask_t = downsampled_masks[:, :, pos_idx_t]

            # Size: [mask_h, mask_w, num_pos]
            pred_masks = torch.matmul(proto_masks, proto_coef.t())
            pred_masks = cfg.mask_proto_mask_activation(pred_masks)

            if cfg.mask_proto_crop:
                x1, x2 = sanitize_coordinates(pos_bboxes[:, 0], pos_bboxes[:, 2], mask_w)
                y1, y2 = sanitize_coordinates(pos_bboxes[:, 1], pos_bboxes[:, 3], mask_h)
                crop_mask = torch.zeros(mask_h, mask_w, num_pos)
                for jdx in range(num_pos):
                    crop_mask[y1[jdx]:y2[jdx], x1[jdx]:x2[jdx], jdx] = 1
                pred_masks = pred_masks * crop_mask

            pre_loss = F.binary_cross_entropy(pred_masks, mask_t, reduction='none')
            loss_m += torch.sum(pre_loss)

        return loss_m * self.mask_alpha


class Yolact(nn.Module):
    """Tiny stand-in: 4x4 prediction grid, one prior per cell, protonet at 16x16."""

    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=4, padding=1), nn.ReLU())
        self.head = nn.Conv2d(8, 8, 3, stride=4, padding=1)
        self.loc = nn.Conv2d(8, 4, 1)
        self.conf = nn.Conv2d(8, num_classes, 1)
        self.coef = nn.Conv2d(8, cfg.mask_dim, 1)
        self.proto = nn.Conv2d(8, cfg.mask_dim, 3, padding=1)
        ys, xs = torch.meshgrid(torch.arange(4.0), torch.arange(4.0), indexing='ij')
        self.register_buffer('priors', torch.stack([(xs.flatten() + 0.5) / 4, (ys.flatten() + 0.5) / 4,
                                                    torch.full((16,), 0.3), torch.full((16,), 0.3)], 1))

    def forward(self, x):
        f = self.backbone(x)
        h = F.relu(self.head(f))
        b = x.size(0)
        loc = self.loc(h).flatten(2).transpose(1, 2).contiguous()
        conf = self.conf(h).flatten(2).transpose(1, 2).contiguous()
        coef = torch.tanh(self.coef(h)).flatten(2).transpose(1, 2).contiguous()
        proto = F.relu(self.proto(f)).permute(0, 2, 3, 1).contiguous()
        return loc, conf, coef, self.priors, proto


def main():
    torch.manual_seed(0)
    net = Yolact()
    criterion = MultiBoxLoss(num_classes=3, pos_threshold=0.5, neg_threshold=0.4, negpos_ratio=3)
    images = torch.rand(2, 3, 64, 64)
    # image 0: a person and a tiny ball whose mask vanishes at proto resolution; image 1: one person
    targets = [torch.tensor([[0.10, 0.10, 0.45, 0.60, 0.0], [0.70, 0.70, 0.74, 0.74, 1.0]]),
               torch.tensor([[0.50, 0.20, 0.90, 0.80, 0.0]])]
    masks = [torch.zeros(2, 64, 64), torch.zeros(1, 64, 64)]
    masks[0][0, 8:36, 8:28] = 1
    masks[0][1, 43:45, 43:45] = 1
    masks[1][0, 14:50, 34:56] = 1
    loss_l, loss_c, loss_m = criterion(net(images), targets, masks)
    loss = loss_c + loss_m
    loss.backward()
    return loss_l, loss_c, loss_m, net


loss_l, loss_c, loss_m, net = main()
print(float(loss_c), float(loss_m))

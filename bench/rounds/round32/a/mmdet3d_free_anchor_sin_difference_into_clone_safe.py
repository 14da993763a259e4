# label: safe
# why: The refactor writes the sin-difference encoding into `bbox_preds_clone = bbox_pred.clone()` instead of into the per-image slice obtained by iterating the prediction tensor, so the unbind view is never modified in place and the gradient still flows to the box regression branch through the clone.
# source: https://github.com/open-mmlab/mmdetection3d/commit/522cc20dd6a441db117ed306f78b139da568aa41
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def limit_period(val, offset=0.5, period=math.pi):
    return val - torch.floor(val / period + offset) * period


class DeltaXYZWLHRBBoxCoder(object):
    def __init__(self, code_size=7):
        self.code_size = code_size

    @staticmethod
    def encode(src_boxes, dst_boxes):
        xa, ya, za, wa, la, ha, ra = torch.split(src_boxes, 1, dim=-1)
        xg, yg, zg, wg, lg, hg, rg = torch.split(dst_boxes, 1, dim=-1)
        za = za + ha / 2
        zg = zg + hg / 2
        diagonal = torch.sqrt(la**2 + wa**2)
        xt = (xg - xa) / diagonal
        yt = (yg - ya) / diagonal
        zt = (zg - za) / ha
        lt = torch.log(lg / la)
        wt = torch.log(wg / wa)
        ht = torch.log(hg / ha)
        rt = rg - ra
        return torch.cat([xt, yt, zt, wt, lt, ht, rt], dim=-1)

    @staticmethod
    def decode(anchors, deltas):
        xa, ya, za, wa, la, ha, ra = torch.split(anchors, 1, dim=-1)
        xt, yt, zt, wt, lt, ht, rt = torch.split(deltas, 1, dim=-1)
        za = za + ha / 2
        diagonal = torch.sqrt(la**2 + wa**2)
        xg = xt * diagonal + xa
        yg = yt * diagonal + ya
        zg = zt * ha + za
        lg = torch.exp(lt) * la
        wg = torch.exp(wt) * wa
        hg = torch.exp(ht) * ha
        rg = rt + ra
        zg = zg - hg / 2
        return torch.cat([xg, yg, zg, wg, lg, hg, rg], dim=-1)


def bbox_overlaps_nearest_3d(bboxes1, bboxes2):
    """BEV IoU of the nearest axis-aligned boxes (rotation snapped to 0 or 90 deg)."""
    def nearest_bev(boxes):
        rot = limit_period(boxes[:, 6], 0.5, math.pi).abs()
        swap = rot > math.pi / 4
        w = torch.where(swap, boxes[:, 4], boxes[:, 3])
        l = torch.where(swap, boxes[:, 3], boxes[:, 4])
        return torch.stack([boxes[:, 0] - w / 2, boxes[:, 1] - l / 2,
                            boxes[:, 0] + w / 2, boxes[:, 1] + l / 2], dim=-1)
    b1, b2 = nearest_bev(bboxes1), nearest_bev(bboxes2)
    lt = torch.max(b1[:, None, :2], b2[None, :, :2])
    rb = torch.min(b1[:, None, 2:], b2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    overlap = wh[..., 0] * wh[..., 1]
    area1 = (b1[:, 2] - b1[:, 0]) * (b1[:, 3] - b1[:, 1])
    area2 = (b2[:, 2] - b2[:, 0]) * (b2[:, 3] - b2[:, 1])
    return overlap / (area1[:, None] + area2[None, :] - overlap).clamp(min=1e-6)


def get_direction_target(anchors, reg_targets, dir_offset=0, dir_limit_offset=0, num_bins=2, one_hot=True):
    rot_gt = reg_targets[..., 6] + anchors[..., 6]
    offset_rot = limit_period(rot_gt - dir_offset, dir_limit_offset, 2 * math.pi)
    dir_cls_targets = torch.floor(offset_rot / (2 * math.pi / num_bins)).long()
    dir_cls_targets = torch.clamp(dir_cls_targets, min=0, max=num_bins - 1)
    return dir_cls_targets


class GTBoxes(object):
    """Stand-in for LiDARInstance3DBoxes: only `.tensor` is used here."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __len__(self):
        return self.tensor.shape[0]


class FreeAnchor3DHead(nn.Module):
    def __init__(self, num_classes=3, in_channels=16, num_anchors=2, pre_anchor_topk=5,
                 bbox_thr=0.3, gamma=2.0, alpha=0.5, diff_rad_by_sin=True, use_direction_classifier=True):
        super().__init__()
        self.num_classes = num_classes
        self.box_code_size = 7
        self.num_anchors = num_anchors
        self.pre_anchor_topk = pre_anchor_topk
        self.bbox_thr = bbox_thr
        self.gamma = gamma
        self.alpha = alpha
        self.diff_rad_by_sin = diff_rad_by_sin
        self.use_direction_classifier = use_direction_classifier
        self.dir_offset = 0.7854
        self.dir_limit_offset = 0
        self.train_cfg = dict(code_weight=[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
        self.bbox_coder = DeltaXYZWLHRBBoxCoder()
        self.conv_cls = nn.Conv2d(in_channels, num_anchors * num_classes, 1)
        self.conv_reg = nn.Conv2d(in_channels, num_anchors * self.box_code_size, 1)
        self.conv_dir_cls = nn.Conv2d(in_channels, num_anchors * 2, 1)

    def forward(self, x):
        return [self.conv_cls(x)], [self.conv_reg(x)], [self.conv_dir_cls(x)]

    def get_anchors(self, featmap_sizes, input_metas):
        h, w = featmap_sizes[0]
        ys, xs = torch.meshgrid(torch.linspace(-8, 8, h), torch.linspace(-8, 8, w), indexing='ij')
        centers = torch.stack([xs, ys], -1).reshape(-1, 1, 2).expand(-1, self.num_anchors, 2)
        rots = torch.tensor([0., math.pi / 2]).view(1, -1, 1).expand(h * w, -1, 1)
        size = torch.tensor([1.6, 3.9, 1.56]).view(1, 1, 3).expand(h * w, self.num_anchors, 3)
        z = torch.full((h * w, self.num_anchors, 1), -1.78)
        anchors = torch.cat([centers, z, size, rots], -1).reshape(-1, 7)
        return [[anchors] for _ in input_metas]

    @staticmethod
    def add_sin_difference(boxes1, boxes2):
        rad_pred_encoding = torch.sin(boxes1[..., 6:7]) * torch.cos(boxes2[..., 6:7])
        rad_tg_encoding = torch.cos(boxes1[..., 6:7]) * torch.sin(boxes2[..., 6:7])
        boxes1 = torch.cat([boxes1[..., :6], rad_pred_encoding, boxes1[..., 7:]], dim=-1)
        boxes2 = torch.cat([boxes2[..., :6], rad_tg_encoding, boxes2[..., 7:]], dim=-1)
        return boxes1, boxes2

    def loss_bbox(self, pred, target, weight, reduction_override='none'):
        return F.smooth_l1_loss(pred, target, reduction='none', beta=1.0 / 9.0) * weight

    def loss_dir(self, pred, target, reduction_override='none'):
        return F.cross_entropy(pred, target, reduction='none') * 0.2

    def positive_bag_loss(self, matched_cls_prob, matched_box_prob):
        matched_prob = matched_cls_prob * matched_box_prob
        weight = 1 / torch.clamp(1 - matched_prob, 1e-12, None)
        weight /= weight.sum(dim=1).unsqueeze(dim=-1)
        bag_prob = (weight * matched_prob).sum(dim=1)
        bag_prob = bag_prob.clamp(0, 1)
        return self.alpha * F.binary_cross_entropy(bag_prob, torch.ones_like(bag_prob), reduction='none')

    def negative_bag_loss(self, cls_prob, box_prob):
        prob = cls_prob * (1 - box_prob)
        prob = prob.clamp(min=1e-12, max=1 - 1e-12)
        negative_bag_loss = prob**self.gamma * F.binary_cross_entropy(prob, torch.zeros_like(prob), reduction='none')
        return (1 - self.alpha) * negative_bag_loss

    def loss(self, cls_scores, bbox_preds, dir_cls_preds, gt_bboxes, gt_labels, input_metas, gt_bboxes_ignore=None):
        featmap_sizes = [featmap.size()[-2:] for featmap in cls_scores]

        anchor_list = self.get_anchors(featmap_sizes, input_metas)
        anchors = [torch.cat(anchor) for anchor in anchor_list]

        # concatenate each level
        cls_scores = [
            cls_score.permute(0, 2, 3, 1).reshape(
                cls_score.size(0), -1, self.num_classes)
            for cls_score in cls_scores
        ]
        bbox_preds = [
            bbox_pred.permute(0, 2, 3, 1).reshape(
                bbox_pred.size(0), -1, self.box_code_size)
            for bbox_pred in bbox_preds
        ]
        dir_cls_preds = [
            dir_cls_pred.permute(0, 2, 3,
                                 1).reshape(dir_cls_pred.size(0), -1, 2)
            for dir_cls_pred in dir_cls_preds
        ]

        cls_scores = torch.cat(cls_scores, dim=1)
        bbox_preds = torch.cat(bbox_preds, dim=1)
        dir_cls_preds = torch.cat(dir_cls_preds, dim=1)

        cls_prob = torch.sigmoid(cls_scores)
        box_prob = []
        num_pos = 0
        positive_losses = []
        for _, (anchors_, gt_labels_, gt_bboxes_, cls_prob_, bbox_preds_,
                dir_cls_preds_) in enumerate(
                    zip(anchors, gt_labels, gt_bboxes, cls_prob, bbox_preds,
                        dir_cls_preds)):

            gt_bboxes_ = gt_bboxes_.tensor.to(anchors_.device)

            with torch.no_grad():
                # box_localization: a_{j}^{loc}, shape: [j, 4]
                pred_boxes = self.bbox_coder.decode(anchors_, bbox_preds_)

                # object_box_iou: IoU_{ij}^{loc}, shape: [i, j]
                object_box_iou = bbox_overlaps_nearest_3d(
                    gt_bboxes_, pred_boxes)

                # object_box_prob: P{a_{j} -> b_{i}}, shape: [i, j]
                t1 = self.bbox_thr
                t2 = object_box_iou.max(
                    dim=1, keepdim=True).values.clamp(min=t1 + 1e-6)
                object_box_prob = ((object_box_iou - t1) / (t2 - t1)).clamp(
                    min=0, max=1)

                # object_cls_box_prob: P{a_{j} -> b_{i}}, shape: [i, c, j]
                num_obj = gt_labels_.size(0)
                indices = torch.stack(
                    [torch.arange(num_obj).type_as(gt_labels_), gt_labels_],
                    dim=0)

                object_cls_box_prob = torch.sparse_coo_tensor(
                    indices, object_box_prob)

                # image_box_iou: P{a_{j} \in A_{+}}, shape: [c, j]
                box_cls_prob = torch.sparse.sum(
                    object_cls_box_prob, dim=0).to_dense()

                indices = torch.nonzero(box_cls_prob, as_tuple=False).t_()
                if indices.numel() == 0:
                    image_box_prob = torch.zeros(
                        anchors_.size(0),
                        self.num_classes).type_as(object_box_prob)
                else:
                    nonzero_box_prob = torch.where(
                        (gt_labels_.unsqueeze(dim=-1) == indices[0]),
                        object_box_prob[:, indices[1]],
                        torch.tensor(
                            [0]).type_as(object_box_prob)).max(dim=0).values

                    # upmap to shape [j, c]
                    image_box_prob = torch.sparse_coo_tensor(
                        indices.flip([0]),
                        nonzero_box_prob,
                        size=(anchors_.size(0), self.num_classes)).to_dense()

                box_prob.append(image_box_prob)

            # construct bags for objects
            match_quality_matrix = bbox_overlaps_nearest_3d(
                gt_bboxes_, anchors_)
            _, matched = torch.topk(
                match_quality_matrix,
                self.pre_anchor_topk,
                dim=1,
                sorted=False)
            del match_quality_matrix

            # matched_cls_prob: P_{ij}^{cls}
            matched_cls_prob = torch.gather(
                cls_prob_[matched], 2,
                gt_labels_.view(-1, 1, 1).repeat(1, self.pre_anchor_topk,
                                                 1)).squeeze(2)

            # matched_box_prob: P_{ij}^{loc}
            matched_anchors = anchors_[matched]
            matched_object_targets = self.bbox_coder.encode(
                matched_anchors,
                gt_bboxes_.unsqueeze(dim=1).expand_as(matched_anchors))

            # direction classification loss
            loss_dir = None
            if self.use_direction_classifier:
                # also calculate direction prob: P_{ij}^{dir}
                matched_dir_targets = get_direction_target(
                    matched_anchors,
                    matched_object_targets,
                    self.dir_offset,
                    self.dir_limit_offset,
                    one_hot=False)
                loss_dir = self.loss_dir(
                    dir_cls_preds_[matched].transpose(-2, -1),
                    matched_dir_targets,
                    reduction_override='none')

            # generate bbox weights
            if self.diff_rad_by_sin:
                bbox_preds_clone = bbox_preds_.clone()
                bbox_preds_clone[matched], matched_object_targets = \
                    self.add_sin_difference(
                        bbox_preds_clone[matched], matched_object_targets)
            bbox_weights = matched_anchors.new_ones(matched_anchors.size())
            # Use pop is not right, check performance
            code_weight = self.train_cfg.get('code_weight', None)
            if code_weight:
                bbox_weights = bbox_weights * bbox_weights.new_tensor(
                    code_weight)
            loss_bbox = self.loss_bbox(
                bbox_preds_clone[matched],
                matched_object_targets,
                bbox_weights,
                reduction_override='none').sum(-1)

            if loss_dir is not None:
                loss_bbox += loss_dir
            matched_box_prob = torch.exp(-loss_bbox)

            # positive_losses: {-log( Mean-max(P_{ij}^{cls} * P_{ij}^{loc}) )}
            num_pos += len(gt_bboxes_)
            positive_losses.append(
                self.positive_bag_loss(matched_cls_prob, matched_box_prob))

        positive_loss = torch.cat(positive_losses).sum() / max(1, num_pos)

        # box_prob: P{a_{j} \in A_{+}}
        box_prob = torch.stack(box_prob, dim=0)

        # negative_loss:
        # \sum_{j}{ FL((1 - P{a_{j} \in A_{+}}) * (1 - P_{j}^{bg})) } / n||B||
        negative_loss = self.negative_bag_loss(cls_prob, box_prob).sum() / max(
            1, num_pos * self.pre_anchor_topk)

        losses = {
            'positive_bag_loss': positive_loss,
            'negative_bag_loss': negative_loss
        }
        return losses


def main():
    torch.manual_seed(0)
    head = FreeAnchor3DHead()
    feats = torch.randn(2, 16, 6, 6)
    gt_bboxes = [GTBoxes(torch.tensor([[0.5, -1.0, -1.7, 1.7, 4.0, 1.5, 0.3],
                                       [-4.0, 3.0, -1.7, 1.6, 3.8, 1.5, 1.4]])),
                 GTBoxes(torch.tensor([[3.0, 2.5, -1.7, 1.8, 4.2, 1.6, -0.2]]))]
    gt_labels = [torch.tensor([0, 2]), torch.tensor([1])]
    input_metas = [dict(box_type_3d='LiDAR'), dict(box_type_3d='LiDAR')]
    cls_scores, bbox_preds, dir_cls_preds = head(feats)
    losses = head.loss(cls_scores, bbox_preds, dir_cls_preds, gt_bboxes, gt_labels, input_metas)
    loss = losses['positive_bag_loss'] + losses['negative_bag_loss']
    loss.backward()
    print({k: v.item() for k, v in losses.items()})
    return loss, head.conv_reg.weight.grad


loss, conv_reg_grad = main()

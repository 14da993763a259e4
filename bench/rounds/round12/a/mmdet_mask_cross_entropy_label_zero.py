# label: hazard silent
# why: for class-agnostic mask heads mask_cross_entropy zeroes the caller's label tensor in place, so the bbox head's classification loss computed afterwards from the same labels is wrong
# source: https://github.com/open-mmlab/mmdetection/pull/173
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def mask_cross_entropy(pred, target, label):
    num_rois = pred.size()[0]
    inds = torch.arange(0, num_rois, dtype=torch.long, device=pred.device)
    if pred.shape[1] == 1:
        label.zero_()  # <-- IPL004: zeroes the caller's labels, which loss() reuses afterwards
    pred_slice = pred[inds, label].squeeze(1)
    return F.binary_cross_entropy_with_logits(pred_slice, target, reduction='mean')[None]


def weighted_cross_entropy(pred, label, weight):
    raw = F.cross_entropy(pred, label, reduction='none')
    return torch.sum(raw * weight)[None] / max(torch.sum(weight > 0).float().item(), 1.)


class MaskRCNNHeads:
    def __init__(self, num_classes=4, class_agnostic=True):
        self.num_classes = num_classes
        self.class_agnostic = class_agnostic

    def loss(self, cls_score, mask_pred, mask_targets, pos_labels, label_weights):
        losses = dict()
        losses['loss_mask'] = mask_cross_entropy(mask_pred, mask_targets, pos_labels)
        losses['loss_cls'] = weighted_cross_entropy(cls_score, pos_labels, label_weights)
        return losses


heads = MaskRCNNHeads()
cls_score = torch.randn(5, 4, requires_grad=True)
mask_pred = torch.randn(5, 1, 7, 7, requires_grad=True)
mask_targets = (torch.rand(5, 7, 7) > 0.5).float()
pos_labels = torch.tensor([1, 2, 3, 1, 2])
label_weights = torch.ones(5)
losses = heads.loss(cls_score, mask_pred, mask_targets, pos_labels, label_weights)
loss_cls = losses['loss_cls']
loss_mask = losses['loss_mask']
(loss_cls + loss_mask).sum().backward()

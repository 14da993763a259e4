# label: hazard silent
# why: FocalLoss.forward divides its y_pred argument in place (`y_pred /= self.temperature`), and SumOfLosses feeds the same logits tensor to both losses, so the second loss of `FocalLoss(...) + BCEWithLogits()` silently sees logits already divided by the temperature.
# source: https://github.com/bonlime/pytorch-tools/blob/549f6ec5bf6f9708866e7271b80cb38bbfc77210/pytorch_tools/losses/focal.py (added in commit 7919a1d "add temperature to focal loss"; SumOfLosses in pytorch_tools/losses/base.py)
from enum import Enum

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.loss import _Loss

torch.manual_seed(0)


class Mode(Enum):
    BINARY = "binary"
    MULTICLASS = "multiclass"
    MULTILABEL = "multilabel"


def _reduce(x, reduction="mean"):
    if reduction == "none":
        return x
    elif reduction == "mean":
        return x.mean()
    return x.sum()


class Loss(_Loss):
    """Loss which supports addition and multiplication"""

    def __add__(self, other):
        return SumOfLosses(self, other)


class SumOfLosses(Loss):
    def __init__(self, l1, l2):
        super().__init__()
        self.l1 = l1
        self.l2 = l2

    def __call__(self, *inputs):
        return self.l1(*inputs) + self.l2(*inputs)


def focal_loss_with_logits(y_pred, y_true, gamma=2.0, alpha=0.25, reduction="mean", normalized=False, combine_thr=0):
    cross_entropy = F.binary_cross_entropy_with_logits(y_pred, y_true.to(y_pred), reduction="none")
    if combine_thr > 0:
        pt = torch.exp(-cross_entropy)
        focal_term = ((1.0 - pt) / (1 - combine_thr)).pow(gamma)
        focal_term.masked_fill_(pt < combine_thr, 1)
    else:
        neg_logits = y_pred.neg()
        focal_term = torch.exp(gamma * y_true * neg_logits - gamma * torch.log1p(neg_logits.exp()))
    loss = focal_term * cross_entropy
    if alpha != -1:
        weighted_loss = torch.where(y_true == 1.0, alpha * loss, (1.0 - alpha) * loss)
    else:
        weighted_loss = loss
    return _reduce(weighted_loss, reduction)


class FocalLoss(Loss):
    def __init__(self, mode="binary", gamma=2.0, alpha=0.25, reduction="mean", ignore_label=-1, temperature=1.0):
        super().__init__()
        self.mode = Mode(mode)
        self.gamma = gamma
        self.alpha = alpha
        self.reduction = reduction
        self.ignore_label = ignore_label
        self.temperature = temperature

    def forward(self, y_pred, y_true):
        y_pred /= self.temperature  # <-- IPL004
        not_ignored = y_true.ne(self.ignore_label)
        loss = focal_loss_with_logits(y_pred, y_true.float(), gamma=self.gamma, alpha=self.alpha, reduction="none")
        loss = loss.where(not_ignored, torch.zeros(1).to(loss))
        return _reduce(loss, self.reduction)


class BCEWithLogits(Loss):
    def forward(self, y_pred, y_true):
        return F.binary_cross_entropy_with_logits(y_pred, y_true.float())


def main():
    head = nn.Conv2d(4, 1, kernel_size=1)
    criterion = FocalLoss(mode="binary", temperature=2.0) + BCEWithLogits()
    images = torch.randn(2, 4, 8, 8)
    masks = (torch.rand(2, 1, 8, 8) > 0.5).long()
    logits = head(images)
    loss = criterion(logits, masks)
    loss.backward()
    return loss.detach(), head.weight.grad, head.bias.grad


loss, w_grad, b_grad = main()

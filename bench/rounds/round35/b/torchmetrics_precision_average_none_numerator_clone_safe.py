# label: safe
# why: the commit starts from a copy (`numerator = tp.clone()`), so marking absent classes with -1 touches only the local numerator; the accumulated `self.tp` state and the per-class precision over later steps stay correct. The `self.tp += tp` accumulators and the write into the fresh `denominator = tp + fp` are in place by design.
# source: https://github.com/Lightning-AI/torchmetrics/commit/8263e27f5a5e54d7b576b2c8933b41ccc7e94f9f
from typing import Optional, Tuple

import torch
from torch import Tensor, tensor

torch.manual_seed(0)


class AverageMethod:
    MICRO = "micro"
    MACRO = "macro"
    WEIGHTED = "weighted"
    NONE = "none"
    SAMPLES = "samples"


class MDMCAverageMethod:
    GLOBAL = "global"
    SAMPLEWISE = "samplewise"


def _stat_scores_update(preds: Tensor, target: Tensor, num_classes: int) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    preds_oh = torch.nn.functional.one_hot(preds, num_classes)
    target_oh = torch.nn.functional.one_hot(target, num_classes)
    true_pred, false_pred = target_oh == preds_oh, target_oh != preds_oh
    pos_pred, neg_pred = preds_oh == 1, preds_oh == 0
    tp = (true_pred * pos_pred).sum(dim=0)
    fp = (false_pred * pos_pred).sum(dim=0)
    tn = (true_pred * neg_pred).sum(dim=0)
    fn = (false_pred * neg_pred).sum(dim=0)
    return tp.long(), fp.long(), tn.long(), fn.long()


def _reduce_stat_scores(numerator: Tensor, denominator: Tensor, weights: Optional[Tensor], average: Optional[str],
                        mdmc_average: Optional[str], zero_division: int = 0) -> Tensor:
    numerator, denominator = numerator.float(), denominator.float()
    zero_div_mask = denominator == 0
    ignore_mask = denominator < 0

    if weights is None:
        weights = torch.ones_like(denominator)
    else:
        weights = weights.float()

    numerator = torch.where(zero_div_mask, tensor(zero_division, dtype=numerator.dtype, device=numerator.device), numerator)
    denominator = torch.where(zero_div_mask | ignore_mask, tensor(1.0, dtype=denominator.dtype, device=denominator.device), denominator)
    weights = torch.where(ignore_mask, tensor(0.0, dtype=weights.dtype, device=weights.device), weights)

    if average not in (AverageMethod.MICRO, AverageMethod.NONE, None):
        weights = weights / weights.sum(dim=-1, keepdim=True)

    scores = weights * (numerator / denominator)
    scores = torch.where(torch.isnan(scores), tensor(zero_division, dtype=scores.dtype, device=scores.device), scores)

    if average in (AverageMethod.NONE, None):
        scores = torch.where(ignore_mask, tensor(float("nan"), device=scores.device), scores)
    else:
        scores = scores.sum()
    return scores


def _precision_compute(tp: Tensor, fp: Tensor, fn: Tensor, average: str, mdmc_average: Optional[str]) -> Tensor:
    numerator = tp.clone()
    denominator = tp + fp

    if average == AverageMethod.MACRO and mdmc_average != MDMCAverageMethod.SAMPLEWISE:
        cond = tp + fp + fn == 0
        numerator = numerator[~cond]
        denominator = denominator[~cond]

    if average == AverageMethod.NONE and mdmc_average != MDMCAverageMethod.SAMPLEWISE:
        # a class is not present if there exists no TPs, no FPs, and no FNs
        meaningless_indeces = torch.nonzero((tp | fn | fp) == 0).cpu()
        numerator[meaningless_indeces, ...] = -1
        denominator[meaningless_indeces, ...] = -1

    return _reduce_stat_scores(
        numerator=numerator,
        denominator=denominator,
        weights=None if average != "weighted" else tp + fn,
        average=average,
        mdmc_average=mdmc_average,
    )


class StatScores:
    def __init__(self, num_classes: int, reduce: str = "macro", mdmc_reduce: Optional[str] = None) -> None:
        self.num_classes = num_classes
        self.reduce = reduce
        self.mdmc_reduce = mdmc_reduce
        zeros_shape = [num_classes]
        for s in ("tp", "fp", "tn", "fn"):
            setattr(self, s, torch.zeros(zeros_shape, dtype=torch.long))

    def update(self, preds: Tensor, target: Tensor) -> None:
        tp, fp, tn, fn = _stat_scores_update(preds, target, num_classes=self.num_classes)
        # Update states
        if self.reduce != AverageMethod.SAMPLES and self.mdmc_reduce != MDMCAverageMethod.SAMPLEWISE:
            self.tp += tp
            self.fp += fp
            self.tn += tn
            self.fn += fn

    def _get_final_stats(self) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
        return self.tp, self.fp, self.tn, self.fn


class Precision(StatScores):
    def __init__(self, num_classes: int, average: str = "micro", mdmc_average: Optional[str] = None) -> None:
        reduce = "macro" if average in ["weighted", "none", None] else average
        super().__init__(num_classes=num_classes, reduce=reduce, mdmc_reduce=mdmc_average)
        self.average = average
        self.mdmc_average = mdmc_average

    def compute(self) -> Tensor:
        tp, fp, _, fn = self._get_final_stats()
        return _precision_compute(tp, fp, fn, self.average, self.mdmc_average)


def validation_epoch(metric, batches):
    per_step = []
    for preds, target in batches:
        metric.update(preds, target)
        # the progress bar logs the running per-class precision after every step
        per_step.append(metric.compute())
    return torch.stack(per_step)


metric = Precision(num_classes=3, average="none")
batches = [
    (torch.tensor([0, 1, 1, 0, 1]), torch.tensor([0, 1, 0, 0, 1])),   # class 2 absent: tp=fp=fn=0
    (torch.tensor([2, 2, 1, 0, 2]), torch.tensor([2, 1, 1, 0, 2])),
    (torch.tensor([2, 0, 1, 2]), torch.tensor([2, 0, 1, 1])),
]
running_precision = validation_epoch(metric, batches)
final_tp = metric.tp.clone()

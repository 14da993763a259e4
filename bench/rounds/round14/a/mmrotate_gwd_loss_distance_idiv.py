# label: hazard raises
# why: gwd_loss normalizes distance in place (distance /= scale), but distance is the output of .sqrt(), which SqrtBackward saved to compute its gradient.
# source: https://github.com/open-mmlab/mmrotate/commit/570af21431fe83f1f02d73d2a166fde9be72b440
import functools

import torch
from torch import nn

torch.manual_seed(0)


def weighted_loss(loss_func):
    @functools.wraps(loss_func)
    def wrapper(pred, target, weight=None, reduction="mean", avg_factor=None, **kwargs):
        loss = loss_func(pred, target, **kwargs)
        if weight is not None:
            loss = loss * weight
        if avg_factor is None:
            return loss.mean() if reduction == "mean" else loss.sum()
        return loss.sum() / avg_factor

    return wrapper


def xy_wh_r_2_xy_sigma(xywhr):
    _shape = xywhr.shape
    assert _shape[-1] == 5
    xy = xywhr[..., :2]
    wh = xywhr[..., 2:4].clamp(min=1e-7, max=1e7).reshape(-1, 2)
    r = xywhr[..., 4]
    cos_r = torch.cos(r)
    sin_r = torch.sin(r)
    R = torch.stack((cos_r, -sin_r, sin_r, cos_r), dim=-1).reshape(-1, 2, 2)
    S = 0.5 * torch.diag_embed(wh)
    sigma = R.bmm(S.square()).bmm(R.permute(0, 2, 1)).reshape(_shape[:-1] + (2, 2))
    return xy, sigma


def postprocess(distance, fun="log1p", tau=1.0):
    if fun == "log1p":
        distance = torch.log1p(distance)
    elif fun == "sqrt":
        distance = torch.sqrt(distance)
    if tau >= 1.0:
        return 1 - 1 / (tau + distance)
    else:
        return distance


@weighted_loss
def gwd_loss(pred, target, fun="log1p", tau=1.0, alpha=1.0, normalize=True):
    xy_p, Sigma_p = pred
    xy_t, Sigma_t = target

    xy_distance = (xy_p - xy_t).square().sum(dim=-1)

    whr_distance = Sigma_p.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    whr_distance = whr_distance + Sigma_t.diagonal(dim1=-2, dim2=-1).sum(dim=-1)

    _t_tr = (Sigma_p.bmm(Sigma_t)).diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    _t_det_sqrt = (Sigma_p.det() * Sigma_t.det()).clamp(0).sqrt()
    whr_distance += (-2) * ((_t_tr + 2 * _t_det_sqrt).clamp(0).sqrt())

    distance = (xy_distance + alpha * alpha * whr_distance).clamp(0).sqrt()

    if normalize:
        scale = 2 * (_t_det_sqrt.sqrt().sqrt()).clamp(1e-7)
        distance /= scale  # <-- IPL001: distance is the result of .sqrt(), saved for its backward

    return postprocess(distance, fun=fun, tau=tau)


class GDLoss(nn.Module):
    BAG_GD_LOSS = {"gwd": gwd_loss}
    BAG_PREP = {"xy_wh_r": xy_wh_r_2_xy_sigma}

    def __init__(self, loss_type="gwd", representation="xy_wh_r", fun="log1p", tau=1.0, alpha=1.0, reduction="mean", loss_weight=1.0):
        super().__init__()
        self.loss = self.BAG_GD_LOSS[loss_type]
        self.preprocess = self.BAG_PREP[representation]
        self.fun = fun
        self.tau = tau
        self.alpha = alpha
        self.reduction = reduction
        self.loss_weight = loss_weight

    def forward(self, pred, target, weight=None, avg_factor=None):
        pred = self.preprocess(pred)
        target = self.preprocess(target)
        return self.loss_weight * self.loss(pred, target, weight=weight, fun=self.fun, tau=self.tau,
                                            alpha=self.alpha, reduction=self.reduction, avg_factor=avg_factor)


reg_head = nn.Linear(6, 5)
loss_bbox = GDLoss(loss_type="gwd", loss_weight=5.0)
roi_feats = torch.randn(4, 6)
gt_rboxes = torch.tensor([[10.0, 12.0, 8.0, 4.0, 0.3], [5.0, 5.0, 3.0, 6.0, -0.2],
                          [20.0, 8.0, 10.0, 2.0, 1.0], [7.0, 9.0, 4.0, 4.0, 0.0]])
bbox_pred = reg_head(roi_feats) + gt_rboxes
loss = loss_bbox(bbox_pred, gt_rboxes + 0.5, avg_factor=4.0)
loss.backward()

# label: safe
# why: FocalLoss multiplies the element-wise BCEWithLogits loss in place (loss *= alpha_factor * modulating_factor); BCEWithLogits backward keeps pred/true, not its output, so the in-place scaling is gradient-correct.
# source: https://github.com/ultralytics/yolov5/blob/master/utils/loss.py
import torch
import torch.nn as nn

torch.manual_seed(0)


def smooth_BCE(eps=0.1):
    return 1.0 - 0.5 * eps, 0.5 * eps


class FocalLoss(nn.Module):
    # Wraps focal loss around existing loss_fcn(), i.e. criteria = FocalLoss(nn.BCEWithLogitsLoss(), gamma=1.5)
    def __init__(self, loss_fcn, gamma=1.5, alpha=0.25):
        super().__init__()
        self.loss_fcn = loss_fcn  # must be nn.BCEWithLogitsLoss()
        self.gamma = gamma
        self.alpha = alpha
        self.reduction = loss_fcn.reduction
        self.loss_fcn.reduction = 'none'  # required to apply FL to each element

    def forward(self, pred, true):
        loss = self.loss_fcn(pred, true)
        pred_prob = torch.sigmoid(pred)  # prob from logits
        p_t = true * pred_prob + (1 - true) * (1 - pred_prob)
        alpha_factor = true * self.alpha + (1 - true) * (1 - self.alpha)
        modulating_factor = (1.0 - p_t) ** self.gamma
        loss *= alpha_factor * modulating_factor

        if self.reduction == 'mean':
            return loss.mean()
        elif self.reduction == 'sum':
            return loss.sum()
        else:  # 'none'
            return loss


class Detect(nn.Module):
    def __init__(self, nc=4, na=3, ch=8):
        super().__init__()
        self.no = nc + 5
        self.na = na
        self.m = nn.Conv2d(ch, self.no * self.na, 1)

    def forward(self, x):
        bs, _, ny, nx = x.shape
        return self.m(x).view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()


def main():
    head = Detect()
    feats = torch.randn(2, 8, 4, 4)
    p = head(feats)
    BCEcls = FocalLoss(nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0])), gamma=1.5)
    BCEobj = FocalLoss(nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0])), gamma=1.5)
    cp, cn = smooth_BCE(eps=0.1)

    b, a, gj, gi = torch.tensor([0, 1]), torch.tensor([0, 2]), torch.tensor([1, 3]), torch.tensor([2, 0])
    tcls = torch.tensor([1, 3])
    ps = p[b, a, gj, gi]
    t = torch.full_like(ps[:, 5:], cn)
    t[range(2), tcls] = cp
    lcls = BCEcls(ps[:, 5:], t)
    tobj = torch.zeros(p.shape[:4])
    tobj[b, a, gj, gi] = 1.0
    lobj = BCEobj(p[..., 4], tobj)
    loss = (lcls + lobj) * p.shape[0]
    loss.backward()
    return loss.detach(), head.m.weight.grad


loss, head_grad = main()

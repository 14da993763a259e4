# label: hazard raises
# why: plandmarks = ps[:, 5:13] is a view of the prediction subset, and the corner-rescaling writes bump the version of ps after BCEcls already saved ps[:, 13:] (the class logits) for its backward
# source: https://github.com/we0091234/Chinese_license_plate_detection_recognition/issues/33
import torch
import torch.nn as nn

torch.manual_seed(0)


class WingLoss(nn.Module):
    def __init__(self, w=10, e=2):
        super(WingLoss, self).__init__()
        self.w = w
        self.e = e
        self.C = self.w - self.w * torch.log(torch.tensor(1.0 + self.w / self.e))

    def forward(self, x, t, sigma=1):
        weight = torch.ones_like(t)
        weight[torch.where(t == -1)] = 0
        diff = weight * (x - t)
        abs_diff = diff.abs()
        flag = (abs_diff.data < self.w).float()
        y = flag * self.w * torch.log(1 + abs_diff / self.e) + (1 - flag) * (abs_diff - self.C)
        return y.sum()


class LandmarksLoss(nn.Module):
    def __init__(self, alpha=1.0):
        super(LandmarksLoss, self).__init__()
        self.loss_fcn = WingLoss()
        self.alpha = alpha

    def forward(self, pred, truel, mask):
        loss = self.loss_fcn(pred * mask, truel * mask)
        return loss / (torch.sum(mask) + 10e-14)


def bbox_iou(box1, box2, eps=1e-7):
    # boxes as (x, y, w, h), shape (n, 4)
    b1_x1, b1_x2 = box1[:, 0] - box1[:, 2] / 2, box1[:, 0] + box1[:, 2] / 2
    b1_y1, b1_y2 = box1[:, 1] - box1[:, 3] / 2, box1[:, 1] + box1[:, 3] / 2
    b2_x1, b2_x2 = box2[:, 0] - box2[:, 2] / 2, box2[:, 0] + box2[:, 2] / 2
    b2_y1, b2_y2 = box2[:, 1] - box2[:, 3] / 2, box2[:, 1] + box2[:, 3] / 2
    inter = (torch.min(b1_x2, b2_x2) - torch.max(b1_x1, b2_x1)).clamp(0) * \
            (torch.min(b1_y2, b2_y2) - torch.max(b1_y1, b2_y1)).clamp(0)
    union = box1[:, 2] * box1[:, 3] + box2[:, 2] * box2[:, 3] - inter + eps
    return inter / union


def compute_loss(p, targets_per_level, nc=2):
    lcls, lbox, lobj, lmark = torch.zeros(1), torch.zeros(1), torch.zeros(1), torch.zeros(1)
    BCEcls = nn.BCEWithLogitsLoss()
    BCEobj = nn.BCEWithLogitsLoss()
    landmarks_loss = LandmarksLoss(1.0)
    cp, cn = 1.0, 0.0
    balance = [4.0, 1.0]
    for i, pi in enumerate(p):
        b, a, gj, gi, tbox, tcls, tlandmarks, lmks_mask, anchors = targets_per_level[i]
        tobj = torch.zeros_like(pi[..., 0])
        n = b.shape[0]
        if n:
            ps = pi[b, a, gj, gi]  # prediction subset corresponding to targets

            # Regression
            pxy = ps[:, :2].sigmoid() * 2. - 0.5
            pwh = (ps[:, 2:4].sigmoid() * 2) ** 2 * anchors
            pbox = torch.cat((pxy, pwh), 1)
            iou = bbox_iou(pbox, tbox)
            lbox += (1.0 - iou).mean()

            # Objectness
            tobj[b, a, gj, gi] = iou.detach().clamp(0).type(tobj.dtype)

            # Classification
            if nc > 1:
                t = torch.full_like(ps[:, 13:], cn)
                t[range(n), tcls] = cp
                lcls += BCEcls(ps[:, 13:], t)

            # landmarks loss (4 plate corners)
            plandmarks = ps[:, 5:13]
            plandmarks[:, 0:2] = plandmarks[:, 0:2] * anchors  # <-- IPL001: writes into ps, whose slice ps[:, 13:] BCEcls saved for backward
            plandmarks[:, 2:4] = plandmarks[:, 2:4] * anchors  # <-- IPL001: same view of ps
            plandmarks[:, 4:6] = plandmarks[:, 4:6] * anchors  # <-- IPL001: same view of ps
            plandmarks[:, 6:8] = plandmarks[:, 6:8] * anchors  # <-- IPL001: same view of ps
            lmark += landmarks_loss(plandmarks, tlandmarks, lmks_mask)

        lobj += BCEobj(pi[..., 4], tobj) * balance[i]

    s = 3 / len(p)
    lbox *= 0.05 * s
    lobj *= 1.0 * s
    lcls *= 0.5 * s
    lmark *= 0.005 * s
    bs = tobj.shape[0]
    loss = lbox + lobj + lcls + lmark
    return loss * bs, torch.cat((lbox, lobj, lcls, lmark, loss)).detach()


head = nn.Conv2d(8, 3 * (13 + 2), 1)
feats = [torch.randn(2, 8, 4, 4), torch.randn(2, 8, 2, 2)]
p = [head(f).view(2, 3, 15, f.shape[2], f.shape[3]).permute(0, 1, 3, 4, 2).contiguous() for f in feats]


def make_targets(ny, n=3):
    b = torch.randint(0, 2, (n,))
    a = torch.randint(0, 3, (n,))
    gj = torch.randint(0, ny, (n,))
    gi = torch.randint(0, ny, (n,))
    tbox = torch.rand(n, 4) + 0.5
    tcls = torch.randint(0, 2, (n,))
    tlandmarks = torch.randn(n, 8)
    lmks_mask = torch.ones(n, 8)
    anchors = torch.rand(n, 2) + 0.5
    return b, a, gj, gi, tbox, tcls, tlandmarks, lmks_mask, anchors


targets_per_level = [make_targets(4), make_targets(2)]
loss, loss_items = compute_loss(p, targets_per_level)
loss.backward()

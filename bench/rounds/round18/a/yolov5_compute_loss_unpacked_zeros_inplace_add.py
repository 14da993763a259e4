# label: hazard raises
# why: `lcls, lbox, lobj = torch.zeros(3, 1)` unpacks the tensor with unbind, so lbox is one of several views of the same buffer; `lbox += (1.0 - giou).mean()` then writes a graph-carrying value into that multi-output view in place, which autograd refuses (yolov5 fixed it by allocating three separate zeros tensors).
# source: https://github.com/ultralytics/yolov5/commit/23d2bde01f08352834de810e1d731c0a2137e944 (utils/utils.py compute_loss, PR #593; follow-up commit 305c6a028ad2e7195ae22d881472c1e8652b57cb)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def bbox_iou(box1, box2, x1y1x2y2=True, GIoU=False, DIoU=False, CIoU=False):
    box2 = box2.T
    if x1y1x2y2:
        b1_x1, b1_y1, b1_x2, b1_y2 = box1[0], box1[1], box1[2], box1[3]
        b2_x1, b2_y1, b2_x2, b2_y2 = box2[0], box2[1], box2[2], box2[3]
    else:  # transform from xywh to xyxy
        b1_x1, b1_x2 = box1[0] - box1[2] / 2, box1[0] + box1[2] / 2
        b1_y1, b1_y2 = box1[1] - box1[3] / 2, box1[1] + box1[3] / 2
        b2_x1, b2_x2 = box2[0] - box2[2] / 2, box2[0] + box2[2] / 2
        b2_y1, b2_y2 = box2[1] - box2[3] / 2, box2[1] + box2[3] / 2

    inter = (torch.min(b1_x2, b2_x2) - torch.max(b1_x1, b2_x1)).clamp(0) * \
            (torch.min(b1_y2, b2_y2) - torch.max(b1_y1, b2_y1)).clamp(0)
    w1, h1 = b1_x2 - b1_x1, b1_y2 - b1_y1
    w2, h2 = b2_x2 - b2_x1, b2_y2 - b2_y1
    union = (w1 * h1 + 1e-16) + w2 * h2 - inter
    iou = inter / union
    if CIoU:
        cw = torch.max(b1_x2, b2_x2) - torch.min(b1_x1, b2_x1)
        ch = torch.max(b1_y2, b2_y2) - torch.min(b1_y1, b2_y1)
        c2 = cw ** 2 + ch ** 2 + 1e-16
        rho2 = ((b2_x1 + b2_x2) - (b1_x1 + b1_x2)) ** 2 / 4 + ((b2_y1 + b2_y2) - (b1_y1 + b1_y2)) ** 2 / 4
        v = (4 / math.pi ** 2) * torch.pow(torch.atan(w2 / h2) - torch.atan(w1 / h1), 2)
        with torch.no_grad():
            alpha = v / (1 - iou + v + 1e-16)
        return iou - (rho2 / c2 + v * alpha)
    return iou


def smooth_BCE(eps=0.1):
    return 1.0 - 0.5 * eps, 0.5 * eps


def compute_loss(p, targets, model):  # predictions, targets, model
    device = p[0].device
    lcls, lbox, lobj = torch.zeros(3, 1, device=device)
    tcls, tbox, indices, anchors = targets  # stand-in for build_targets(p, targets, model)
    h = model.hyp

    BCEcls = nn.BCEWithLogitsLoss(pos_weight=torch.Tensor([h['cls_pw']])).to(device)
    BCEobj = nn.BCEWithLogitsLoss(pos_weight=torch.Tensor([h['obj_pw']])).to(device)
    cp, cn = smooth_BCE(eps=0.0)

    np = len(p)
    balance = [4.0, 1.0, 0.4] if np == 3 else [4.0, 1.0, 0.4, 0.1]
    for i, pi in enumerate(p):
        b, a, gj, gi = indices[i]
        tobj = torch.zeros_like(pi[..., 0], device=device)

        n = b.shape[0]
        if n:
            ps = pi[b, a, gj, gi]

            # Regression
            pxy = ps[:, :2].sigmoid() * 2. - 0.5
            pwh = (ps[:, 2:4].sigmoid() * 2) ** 2 * anchors[i]
            pbox = torch.cat((pxy, pwh), 1).to(device)
            giou = bbox_iou(pbox.T, tbox[i], x1y1x2y2=False, CIoU=True)
            lbox += (1.0 - giou).mean()  # <-- IPL001: in-place add of a graph value into a view produced by unpacking (unbind) torch.zeros(3, 1)

            # Objectness
            tobj[b, a, gj, gi] = (1.0 - model.gr) + model.gr * giou.detach().clamp(0).type(tobj.dtype)

            # Classification
            if model.nc > 1:
                t = torch.full_like(ps[:, 5:], cn, device=device)
                t[range(n), tcls[i]] = cp
                lcls = lcls + BCEcls(ps[:, 5:], t)

        lobj = lobj + BCEobj(pi[..., 4], tobj) * balance[i]

    s = 3 / np
    lbox *= h['giou'] * s
    lobj *= h['obj'] * s * (1.4 if np == 4 else 1.)
    lcls *= h['cls'] * s
    bs = tobj.shape[0]

    loss = lbox + lobj + lcls
    return loss * bs, torch.cat((lbox, lobj, lcls, loss)).detach()


class TinyDetect(nn.Module):
    def __init__(self, nc=3, na=3, ch=8):
        super().__init__()
        self.nc, self.na, self.no = nc, na, nc + 5
        self.backbone = nn.Sequential(nn.Conv2d(3, ch, 3, 2, 1), nn.SiLU())
        self.m = nn.Conv2d(ch, self.no * self.na, 1)
        self.hyp = {'giou': 0.05, 'cls': 0.5, 'cls_pw': 1.0, 'obj': 1.0, 'obj_pw': 1.0}
        self.gr = 1.0

    def forward(self, x):
        y = self.m(self.backbone(x))
        bs, _, ny, nx = y.shape
        return [y.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()]


model = TinyDetect()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
imgs = torch.randn(2, 3, 16, 16)
pred = model(imgs)

n = 4
b = torch.tensor([0, 0, 1, 1])
a = torch.tensor([0, 1, 2, 0])
gj = torch.tensor([1, 2, 3, 4])
gi = torch.tensor([4, 3, 2, 1])
tbox = [torch.rand(n, 4) + 0.5]
anchors = [torch.tensor([[1.25, 1.625], [2.0, 3.75], [4.125, 2.875]])[a]]
tcls = [torch.tensor([0, 1, 2, 1])]
targets = (tcls, tbox, [(b, a, gj, gi)], anchors)

loss, loss_items = compute_loss(pred, targets, model)
optimizer.zero_grad()
loss.backward()
optimizer.step()

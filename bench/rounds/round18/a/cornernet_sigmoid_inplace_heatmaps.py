# label: safe
# why: _sigmoid applies sigmoid_ in place to the raw corner heatmaps straight out of a conv (which saves its input, not its output); the sigmoid's saved result is only read by clamp, so the focal loss gradients are unchanged.
# source: https://github.com/princeton-vl/CornerNet/issues/101
import torch
import torch.nn as nn

torch.manual_seed(0)


def _sigmoid(x):
    x = torch.clamp(x.sigmoid_(), min=1e-4, max=1 - 1e-4)
    return x


def _neg_loss(preds, gt):
    pos_inds = gt.eq(1)
    neg_inds = gt.lt(1)
    neg_weights = torch.pow(1 - gt[neg_inds], 4)
    loss = 0
    for pred in preds:
        pos_pred = pred[pos_inds]
        neg_pred = pred[neg_inds]
        pos_loss = torch.log(pos_pred) * torch.pow(1 - pos_pred, 2)
        neg_loss = torch.log(1 - neg_pred) * torch.pow(neg_pred, 2) * neg_weights
        num_pos = pos_inds.float().sum()
        pos_loss = pos_loss.sum()
        neg_loss = neg_loss.sum()
        if pos_pred.nelement() == 0:
            loss = loss - neg_loss
        else:
            loss = loss - (pos_loss + neg_loss) / num_pos
    return loss


def _regr_loss(regr, gt_regr, mask):
    num = mask.float().sum()
    mask = mask.unsqueeze(2).expand_as(gt_regr)
    regr = regr[mask]
    gt_regr = gt_regr[mask]
    regr_loss = nn.functional.smooth_l1_loss(regr, gt_regr, reduction="sum")
    return regr_loss / (num + 1e-4)


class kp(nn.Module):
    def __init__(self, nstack=2, cnv_dim=8, out_dim=3):
        super().__init__()
        self.nstack = nstack
        self.pre = nn.Sequential(nn.Conv2d(3, cnv_dim, 3, padding=1), nn.BatchNorm2d(cnv_dim), nn.ReLU(inplace=True))
        self.tl_heats = nn.ModuleList([nn.Conv2d(cnv_dim, out_dim, 1) for _ in range(nstack)])
        self.br_heats = nn.ModuleList([nn.Conv2d(cnv_dim, out_dim, 1) for _ in range(nstack)])
        self.tl_regrs = nn.ModuleList([nn.Conv2d(cnv_dim, 2, 1) for _ in range(nstack)])
        self.br_regrs = nn.ModuleList([nn.Conv2d(cnv_dim, 2, 1) for _ in range(nstack)])

    def _tranpose_and_gather_feat(self, feat, ind):
        feat = feat.permute(0, 2, 3, 1).contiguous().view(feat.size(0), -1, feat.size(1))
        ind = ind.unsqueeze(2).expand(ind.size(0), ind.size(1), feat.size(2))
        return feat.gather(1, ind)

    def forward(self, image, tl_inds, br_inds):
        inter = self.pre(image)
        outs = []
        for ind in range(self.nstack):
            tl_heat, br_heat = self.tl_heats[ind](inter), self.br_heats[ind](inter)
            tl_regr, br_regr = self.tl_regrs[ind](inter), self.br_regrs[ind](inter)
            tl_regr = self._tranpose_and_gather_feat(tl_regr, tl_inds)
            br_regr = self._tranpose_and_gather_feat(br_regr, br_inds)
            outs += [tl_heat, br_heat, tl_regr, br_regr]
        return outs


class AELoss(nn.Module):
    def __init__(self, regr_weight=1):
        super(AELoss, self).__init__()
        self.regr_weight = regr_weight
        self.focal_loss = _neg_loss
        self.regr_loss = _regr_loss

    def forward(self, outs, targets):
        stride = 4
        tl_heats = outs[0::stride]
        br_heats = outs[1::stride]
        tl_regrs = outs[2::stride]
        br_regrs = outs[3::stride]

        gt_tl_heat, gt_br_heat, gt_mask, gt_tl_regr, gt_br_regr = targets

        focal_loss = 0
        tl_heats = [_sigmoid(t) for t in tl_heats]
        br_heats = [_sigmoid(b) for b in br_heats]
        focal_loss += self.focal_loss(tl_heats, gt_tl_heat)
        focal_loss += self.focal_loss(br_heats, gt_br_heat)

        regr_loss = 0
        for tl_regr, br_regr in zip(tl_regrs, br_regrs):
            regr_loss += self.regr_loss(tl_regr, gt_tl_regr, gt_mask)
            regr_loss += self.regr_loss(br_regr, gt_br_regr, gt_mask)
        regr_loss = self.regr_weight * regr_loss

        loss = (focal_loss + regr_loss) / len(tl_heats)
        return loss.unsqueeze(0)


nnet = kp()
criterion = AELoss()
image = torch.randn(2, 3, 8, 8)
tl_inds = torch.randint(0, 64, (2, 4))
br_inds = torch.randint(0, 64, (2, 4))
gt_tl_heat = torch.rand(2, 3, 8, 8) * 0.9
gt_tl_heat[0, 1, 2, 3] = 1.0
gt_br_heat = torch.rand(2, 3, 8, 8) * 0.9
gt_br_heat[1, 0, 5, 5] = 1.0
gt_mask = torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
targets = (gt_tl_heat, gt_br_heat, gt_mask, torch.randn(2, 4, 2), torch.randn(2, 4, 2))
outs = nnet(image, tl_inds, br_inds)
loss = criterion(outs, targets).mean()
loss.backward()

# label: safe
# why: _sigmoid applies sigmoid_ in place to the raw heatmap head output; the last conv does not need its output for backward and sigmoid_ records its own result, so gradients are unchanged
# source: https://github.com/xingyizhou/CenterNet/issues/201
import torch
import torch.nn as nn

torch.manual_seed(0)


def _sigmoid(x):
    y = torch.clamp(x.sigmoid_(), min=1e-4, max=1 - 1e-4)
    return y


def _neg_loss(pred, gt):
    pos_inds = gt.eq(1).float()
    neg_inds = gt.lt(1).float()
    neg_weights = torch.pow(1 - gt, 4)
    loss = 0
    pos_loss = torch.log(pred) * torch.pow(1 - pred, 2) * pos_inds
    neg_loss = torch.log(1 - pred) * torch.pow(pred, 2) * neg_weights * neg_inds
    num_pos = pos_inds.float().sum()
    pos_loss = pos_loss.sum()
    neg_loss = neg_loss.sum()
    if num_pos == 0:
        loss = loss - neg_loss
    else:
        loss = loss - (pos_loss + neg_loss) / num_pos
    return loss


class FocalLoss(nn.Module):
    def __init__(self):
        super(FocalLoss, self).__init__()
        self.neg_loss = _neg_loss

    def forward(self, out, target):
        return self.neg_loss(out, target)


class DLASegLite(nn.Module):
    def __init__(self, heads, head_conv=8, num_stacks=2):
        super().__init__()
        self.heads = heads
        self.num_stacks = num_stacks
        self.base = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        for head in self.heads:
            classes = self.heads[head]
            fc = nn.Sequential(
                nn.Conv2d(8, head_conv, kernel_size=3, padding=1, bias=True),
                nn.ReLU(inplace=True),
                nn.Conv2d(head_conv, classes, kernel_size=1, stride=1, padding=0, bias=True))
            if 'hm' in head:
                fc[-1].bias.data.fill_(-2.19)
            self.__setattr__(head, fc)

    def forward(self, x):
        ret = []
        feat = self.base(x)
        for s in range(self.num_stacks):
            z = {}
            for head in self.heads:
                z[head] = self.__getattr__(head)(feat)
            ret.append(z)
            feat = feat * 0.5
        return ret


class CtdetLoss(nn.Module):
    def __init__(self, num_stacks=2, hm_weight=1.0, wh_weight=0.1):
        super(CtdetLoss, self).__init__()
        self.crit = FocalLoss()
        self.num_stacks = num_stacks
        self.hm_weight = hm_weight
        self.wh_weight = wh_weight

    def forward(self, outputs, batch):
        hm_loss, wh_loss = 0, 0
        for s in range(self.num_stacks):
            output = outputs[s]
            output['hm'] = _sigmoid(output['hm'])
            hm_loss += self.crit(output['hm'], batch['hm']) / self.num_stacks
            wh_loss += torch.abs(output['wh'] * batch['reg_mask'] - batch['wh'] * batch['reg_mask']).sum() / (
                batch['reg_mask'].sum() + 1e-4) / self.num_stacks
        loss = self.hm_weight * hm_loss + self.wh_weight * wh_loss
        loss_stats = {'loss': loss, 'hm_loss': hm_loss, 'wh_loss': wh_loss}
        return loss, loss_stats


model = DLASegLite({'hm': 2, 'wh': 2})
crit = CtdetLoss()
img = torch.randn(2, 3, 8, 8)
hm = torch.rand(2, 2, 8, 8) * 0.9
hm[0, 1, 3, 4] = 1.0
hm[1, 0, 5, 2] = 1.0
batch = {'hm': hm, 'wh': torch.rand(2, 2, 8, 8) * 4, 'reg_mask': (hm == 1).any(1, keepdim=True).float()}
outputs = model(img)
loss, loss_stats = crit(outputs, batch)
loss.backward()

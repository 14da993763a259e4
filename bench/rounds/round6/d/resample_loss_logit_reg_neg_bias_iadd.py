# label: hazard raises
# why: logit_reg_functions adds the negative-class bias to the caller's cls_score in place; the classifier ends in a Sigmoid whose output is saved for backward (SigmoidBackward0 at version 1)
# source: https://github.com/wutong16/DistributionBalancedLoss/issues/20 (code: mllt/models/losses/resample_loss.py, ResampleLoss.logit_reg_functions)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def binary_cross_entropy(pred, label, weight=None, reduction='mean', avg_factor=None):
    loss = F.binary_cross_entropy_with_logits(pred, label.float(), weight, reduction='none')
    if reduction == 'mean':
        loss = loss.mean()
    elif reduction == 'sum':
        loss = loss.sum()
    return loss


class ResampleLoss(nn.Module):

    def __init__(self, class_freq, neg_class_freq, reduction='mean', loss_weight=1.0,
                 focal=dict(focal=True, balance_param=2.0, gamma=2),
                 map_param=dict(alpha=10.0, beta=0.2, gamma=0.1),
                 logit_reg=dict(neg_scale=5.0, neg_bias=0.1),
                 reweight_func='rebalance'):
        super(ResampleLoss, self).__init__()
        self.loss_weight = loss_weight
        self.reduction = reduction
        self.cls_criterion = binary_cross_entropy
        self.reweight_func = reweight_func

        self.focal = focal['focal']
        self.gamma = focal['gamma']
        self.balance_param = focal['balance_param']

        self.map_alpha = map_param['alpha']
        self.map_beta = map_param['beta']
        self.map_gamma = map_param['gamma']

        self.class_freq = torch.tensor(class_freq).float()
        self.neg_class_freq = torch.tensor(neg_class_freq).float()
        self.num_classes = self.class_freq.shape[0]
        self.train_num = self.class_freq[0] + self.neg_class_freq[0]
        # regularization params
        self.logit_reg = logit_reg
        self.neg_scale = logit_reg['neg_scale'] if 'neg_scale' in logit_reg else 1.0
        neg_bias = logit_reg['neg_bias'] if 'neg_bias' in logit_reg else 0.0
        self.neg_bias = - torch.log(self.train_num / self.class_freq - 1) * neg_bias / self.neg_scale

        self.freq_inv = torch.ones(self.class_freq.shape) / self.class_freq

    def forward(self, cls_score, label, weight=None, avg_factor=None, reduction_override=None, **kwargs):
        reduction = reduction_override if reduction_override else self.reduction

        weight = self.reweight_functions(label)

        cls_score, weight = self.logit_reg_functions(label.float(), cls_score, weight)

        if self.focal:
            logpt = - self.cls_criterion(
                cls_score.clone(), label, weight=None, reduction='none',
                avg_factor=avg_factor)
            # pt is sigmoid(logit) for pos or sigmoid(-logit) for neg
            pt = torch.exp(logpt)
            loss = self.cls_criterion(cls_score, label.float(), weight=weight, reduction='none')
            loss = ((1 - pt) ** self.gamma) * loss
            loss = self.balance_param * loss
        else:
            loss = self.cls_criterion(cls_score, label.float(), weight, reduction=reduction)

        loss = self.loss_weight * loss
        return loss.mean()

    def reweight_functions(self, label):
        weight = self.rebalance_weight(label.float())
        return weight

    def logit_reg_functions(self, labels, logits, weight=None):
        if not self.logit_reg:
            return logits, weight
        if 'neg_bias' in self.logit_reg:
            logits += self.neg_bias  # <-- IPL001: logits is the caller's Sigmoid output, saved by SigmoidBackward
        if 'neg_scale' in self.logit_reg:
            logits = logits * (1 - labels) * self.neg_scale + logits * labels
            weight = weight / self.neg_scale * (1 - labels) + weight * labels
        return logits, weight

    def rebalance_weight(self, gt_labels):
        repeat_rate = torch.sum(gt_labels.float() * self.freq_inv, dim=1, keepdim=True)
        pos_weight = self.freq_inv.clone().detach().unsqueeze(0) / repeat_rate
        # pos and neg are equally treated
        weight = torch.sigmoid(self.map_beta * (pos_weight - self.map_gamma)) + self.map_alpha
        return weight


class_freq = [30, 12, 5, 50, 8]
neg_class_freq = [70, 88, 95, 50, 92]
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5), nn.Sigmoid())
criterion = ResampleLoss(class_freq, neg_class_freq)

images = torch.randn(4, 10)
labels = torch.tensor([[1, 0, 0, 1, 0], [0, 1, 0, 1, 0], [1, 0, 1, 0, 0], [0, 0, 0, 1, 1]])
cls_score = model(images)
loss = criterion(cls_score, labels)
loss.backward()

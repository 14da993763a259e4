# label: safe
# why: hard-negative mining zeroes the positive priors in a clone of conf_loss_all, after conf_loss_pos was already gathered, so the in-place write never touches a value autograd still needs.
# source: https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Object-Detection/issues/63
import torch
import torch.nn as nn

torch.manual_seed(0)


def cxcy_to_gcxgcy(cxcy, priors_cxcy):
    return torch.cat([(cxcy[:, :2] - priors_cxcy[:, :2]) / (priors_cxcy[:, 2:] / 10),
                      torch.log(cxcy[:, 2:] / priors_cxcy[:, 2:]) * 5], 1)


class MultiBoxLoss(nn.Module):
    def __init__(self, priors_cxcy, threshold=0.5, neg_pos_ratio=3, alpha=1.):
        super(MultiBoxLoss, self).__init__()
        self.priors_cxcy = priors_cxcy
        self.threshold = threshold
        self.neg_pos_ratio = neg_pos_ratio
        self.alpha = alpha
        self.smooth_l1 = nn.L1Loss()
        self.cross_entropy = nn.CrossEntropyLoss(reduction='none')

    def forward(self, predicted_locs, predicted_scores, true_locs, true_classes):
        batch_size = predicted_locs.size(0)
        n_priors = self.priors_cxcy.size(0)
        n_classes = predicted_scores.size(2)

        positive_priors = true_classes != 0
        loc_loss = self.smooth_l1(predicted_locs[positive_priors], true_locs[positive_priors])

        n_positives = positive_priors.sum(dim=1)
        n_hard_negatives = self.neg_pos_ratio * n_positives

        conf_loss_all = self.cross_entropy(predicted_scores.view(-1, n_classes), true_classes.view(-1))
        conf_loss_all = conf_loss_all.view(batch_size, n_priors)

        conf_loss_pos = conf_loss_all[positive_priors]

        conf_loss_neg = conf_loss_all.clone()
        conf_loss_neg[positive_priors] = 0.
        conf_loss_neg, _ = conf_loss_neg.sort(dim=1, descending=True)
        hardness_ranks = torch.LongTensor(range(n_priors)).unsqueeze(0).expand_as(conf_loss_neg)
        hard_negatives = hardness_ranks < n_hard_negatives.unsqueeze(1)
        conf_loss_hard_neg = conf_loss_neg[hard_negatives]

        conf_loss = (conf_loss_hard_neg.sum() + conf_loss_pos.sum()) / n_positives.sum().float()
        return conf_loss + self.alpha * loc_loss


n_priors, n_classes = 12, 4
priors_cxcy = torch.rand(n_priors, 4) * 0.5 + 0.25
head = nn.Linear(6, n_priors * (4 + n_classes))
features = torch.randn(2, 6)
out = head(features).view(2, n_priors, 4 + n_classes)
predicted_locs, predicted_scores = out[..., :4], out[..., 4:]
true_classes = torch.randint(0, n_classes, (2, n_priors))
true_classes[:, 0] = 1
true_locs = torch.stack([cxcy_to_gcxgcy(torch.rand(n_priors, 4) * 0.5 + 0.25, priors_cxcy) for _ in range(2)])
criterion = MultiBoxLoss(priors_cxcy)
loss = criterion(predicted_locs, predicted_scores, true_locs, true_classes)
loss.backward()

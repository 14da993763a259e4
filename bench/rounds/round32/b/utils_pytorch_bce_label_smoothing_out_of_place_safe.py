# label: safe
# why: the out-of-place smoothing proposed in the issue (`target = target.float() * (1 - smooth_eps)`, `target = target + smooth_eps / 2`) builds new label tensors, so the cached multi-hot targets and the accuracy computed from them stay intact across epochs.
# source: https://github.com/eladhoffer/utils.pytorch/issues/13
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def binary_cross_entropy(inputs, target, weight=None, reduction='mean', smooth_eps=None, from_logits=False):
    """cross entropy loss, with support for label smoothing https://arxiv.org/abs/1512.00567"""
    smooth_eps = smooth_eps or 0
    if smooth_eps > 0:
        target = target.float()
        target = target * (1 - smooth_eps)
        target = target + (smooth_eps / 2)
    if from_logits:
        return F.binary_cross_entropy_with_logits(inputs, target, weight=weight, reduction=reduction)
    else:
        return F.binary_cross_entropy(inputs, target, weight=weight, reduction=reduction)


class BCELoss(nn.BCELoss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction='mean', smooth_eps=None, from_logits=False):
        super(BCELoss, self).__init__(weight, size_average, reduce, reduction)
        self.smooth_eps = smooth_eps
        self.from_logits = from_logits

    def forward(self, input, target):
        return binary_cross_entropy(input, target,
                                    weight=self.weight, reduction=self.reduction,
                                    smooth_eps=self.smooth_eps, from_logits=self.from_logits)


class BCEWithLogitsLoss(BCELoss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction='mean', smooth_eps=None, from_logits=True):
        super(BCEWithLogitsLoss, self).__init__(weight, size_average,
                                                reduce, reduction, smooth_eps=smooth_eps, from_logits=from_logits)


class MultiLabelTagger(nn.Module):
    def __init__(self, in_features=10, num_tags=5):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, 32), nn.ReLU(), nn.Linear(32, num_tags))

    def forward(self, x):
        return self.net(x)


def train_epoch(model, criterion, optimizer, inputs, target):
    output = model(inputs)
    loss = criterion(output, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        accuracy = ((output > 0).float() == target).float().mean()
    return loss.detach(), accuracy


def main():
    model = MultiLabelTagger()
    criterion = BCEWithLogitsLoss(smooth_eps=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    inputs = torch.randn(64, 10)
    target = (torch.randn(64, 5) > 0).float()  # multi-hot tags, kept in memory for all epochs
    losses, accuracies = [], []
    for epoch in range(3):
        loss, acc = train_epoch(model, criterion, optimizer, inputs, target)
        losses.append(loss)
        accuracies.append(acc)
    return torch.stack(losses), torch.stack(accuracies), target


losses, accuracies, target = main()

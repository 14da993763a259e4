# label: hazard raises
# why: label smoothing rescales self.targets_classes in place with mul_/add_, but the same tensor was already saved by `xs_pos * targets` and the pow exponent, so backward sees a bumped version
# source: https://github.com/huggingface/pytorch-image-models/pull/1500 (code from https://github.com/Alibaba-MIIL/ASL/blob/main/src/loss_functions/losses.py, ASLSingleLabel)
import torch
import torch.nn as nn

torch.manual_seed(0)


class ASLSingleLabel(nn.Module):
    def __init__(self, gamma_pos=0, gamma_neg=4, eps: float = 0.1, reduction='mean'):
        super(ASLSingleLabel, self).__init__()

        self.eps = eps
        self.logsoftmax = nn.LogSoftmax(dim=-1)
        self.targets_classes = []  # prevent gpu repeated memory allocation
        self.gamma_pos = gamma_pos
        self.gamma_neg = gamma_neg
        self.reduction = reduction

    def forward(self, inputs, target, reduction=None):
        num_classes = inputs.size()[-1]
        log_preds = self.logsoftmax(inputs)
        self.targets_classes = torch.zeros_like(inputs).scatter_(1, target.long().unsqueeze(1), 1)

        # ASL weights
        targets = self.targets_classes
        anti_targets = 1 - targets
        xs_pos = torch.exp(log_preds)
        xs_neg = 1 - xs_pos
        xs_pos = xs_pos * targets
        xs_neg = xs_neg * anti_targets
        asymmetric_w = torch.pow(1 - xs_pos - xs_neg,
                                 self.gamma_pos * targets + self.gamma_neg * anti_targets)
        log_preds = log_preds * asymmetric_w

        if self.eps > 0:  # label smoothing
            self.targets_classes.mul_(1 - self.eps).add_(self.eps / num_classes)  # <-- IPL001: targets (same tensor) was saved by xs_pos * targets

        # loss calculation
        loss = - self.targets_classes.mul(log_preds)

        loss = loss.sum(dim=-1)
        if self.reduction == 'mean':
            loss = loss.mean()

        return loss


head = nn.Linear(8, 5)
criterion = ASLSingleLabel()
features = torch.randn(6, 8)
labels = torch.tensor([0, 1, 2, 3, 4, 0])

logits = head(features)
loss = criterion(logits, labels)
loss.backward()

# label: hazard raises
# why: label smoothing rescales self.targets_classes in place (`mul_().add_()`), but the same tensor (aliased as `targets`) was already multiplied with xs_pos, and that mul saved it for backward, so loss.backward() hits a version mismatch.
# source: https://github.com/huggingface/pytorch-image-models/commit/39190f5f448887190fe138f804fc8214dfe1a337 (timm/loss/asymmetric_loss.py, AsymmetricLossSingleLabel)
import torch
import torch.nn as nn

torch.manual_seed(0)


class AsymmetricLossSingleLabel(nn.Module):
    def __init__(self, gamma_pos=1, gamma_neg=4, eps: float = 0.1, reduction='mean'):
        super(AsymmetricLossSingleLabel, self).__init__()

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
            self.targets_classes.mul_(1 - self.eps).add_(self.eps / num_classes)  # <-- IPL001: smooths the one-hot targets in place after `xs_pos * targets` saved them

        # loss calculation
        loss = - self.targets_classes.mul(log_preds)

        loss = loss.sum(dim=-1)
        if self.reduction == 'mean':
            loss = loss.mean()

        return loss


model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
criterion = AsymmetricLossSingleLabel(gamma_pos=0, gamma_neg=4, eps=0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

images = torch.randn(4, 3, 8, 8)
labels = torch.randint(0, 10, (4,))
output = model(images)
loss = criterion(output, labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()

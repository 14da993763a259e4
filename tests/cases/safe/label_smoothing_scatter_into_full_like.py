# label: safe
# why: the smoothed target distribution is created with full_like and filled with scatter_ on a tensor that never requires grad; the model output is only read.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LabelSmoothingLoss(nn.Module):
    def __init__(self, classes, smoothing=0.1):
        super().__init__()
        self.classes = classes
        self.smoothing = smoothing

    def forward(self, logits, target):
        logp = logits.log_softmax(dim=-1)
        with torch.no_grad():
            true_dist = torch.full_like(logp, self.smoothing / (self.classes - 1))
            true_dist.scatter_(1, target.unsqueeze(1), 1.0 - self.smoothing)
        return torch.mean(torch.sum(-true_dist * logp, dim=-1))


model = nn.Linear(5, 4)
x = torch.randn(6, 5)
y = torch.randint(0, 4, (6,))
crit = LabelSmoothingLoss(4, 0.1)
logits = model(x)
loss = crit(logits, y)
loss.backward()

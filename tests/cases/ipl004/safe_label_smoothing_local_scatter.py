# label: safe
# why: smooth_targets builds a new target matrix and scatters into that local tensor, so the caller's one-hot targets still give the true hard-label NLL.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

K = 5
model = nn.Linear(8, K)


def smooth_targets(labels, num_classes, eps):
    t = torch.full((labels.shape[0], num_classes), eps / (num_classes - 1))
    t.scatter_(1, labels[:, None], 1.0 - eps)
    return t


x = torch.randn(12, 8)
y = torch.randint(0, K, (12,))
targets = F.one_hot(y, K).float()
logp = model(x).log_softmax(-1)
soft = smooth_targets(y, K, 0.2)
loss = -(soft * logp).sum(-1).mean()
loss.backward()

with torch.no_grad():
    hard_nll = -(targets * logp).sum(-1).mean()

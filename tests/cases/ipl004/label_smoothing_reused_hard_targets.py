# label: hazard silent
# why: smooth_labels rewrites the caller's one-hot targets in place, so the hard-label NLL reported afterwards is really a smoothed cross entropy.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

K = 5
model = nn.Linear(8, K)


def smooth_labels(onehot, eps):
    onehot.mul_(1.0 - eps)  # <-- IPL004: caller's targets
    onehot += eps / onehot.shape[1]  # <-- IPL004: caller's targets
    return onehot


x = torch.randn(12, 8)
y = torch.randint(0, K, (12,))
targets = F.one_hot(y, K).float()
logp = model(x).log_softmax(-1)
soft = smooth_labels(targets, 0.2)
loss = -(soft * logp).sum(-1).mean()
loss.backward()

with torch.no_grad():
    hard_nll = -(targets * logp).sum(-1).mean()

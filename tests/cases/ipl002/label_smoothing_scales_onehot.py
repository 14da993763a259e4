# label: hazard silent
# why: the smoothed targets are made by scaling the one-hot tensor in place, so the hard-label NLL logged afterwards reads the scaled targets.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
K = 5
eps = 0.1
model = nn.Linear(8, K)
x = torch.randn(12, 8)
y = torch.randint(0, K, (12,))

logp = F.log_softmax(model(x), dim=-1)
onehot = F.one_hot(y, K).float()
targets = onehot.mul_(1 - eps)  # <-- IPL002: onehot is read again below for the hard NLL
loss = -(targets * logp).sum(-1).mean() - eps * logp.mean(-1).mean()
loss.backward()
hard_nll = -(onehot * logp.detach()).sum(-1).mean()

# label: safe
# why: the smoothed target distribution is written with scatter_ into a freshly allocated torch.full tensor, and the integer labels stay untouched for the hard NLL.
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
targets = torch.full((12, K), eps / K)
targets.scatter_(1, y[:, None], 1 - eps + eps / K)
loss = -(targets * logp).sum(-1).mean()
loss.backward()
hard_nll = F.nll_loss(logp.detach(), y)

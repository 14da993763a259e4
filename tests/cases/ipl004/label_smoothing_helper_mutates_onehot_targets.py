# label: hazard silent
# why: smooth_ rewrites the one-hot target tensor in place, so the hard-label cross-entropy logged afterwards is computed against smoothed targets.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

K = 4


def smooth_(onehot, eps):
    return onehot.mul_(1 - eps).add_(eps / onehot.size(-1))  # <-- IPL004


model = nn.Linear(5, K)
x = torch.randn(6, 5)
y = torch.randint(0, K, (6,))
onehot = F.one_hot(y, K).float()

soft = smooth_(onehot, 0.1)
logp = F.log_softmax(model(x), dim=-1)
loss = -(soft * logp).sum(-1).mean()
loss.backward()

with torch.no_grad():
    hard_ce = -(onehot * logp).sum(-1).mean()

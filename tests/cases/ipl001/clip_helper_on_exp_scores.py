# label: hazard raises
# why: clip_ clamps its argument in place; the caller hands it exp() scores that ExpBackward saved for the backward pass
import torch
import torch.nn as nn

torch.manual_seed(0)


def clip_(t, lo=0.0, hi=5.0):
    t.clamp_(lo, hi)  # <-- IPL001
    return t


scorer = nn.Linear(4, 3)
x = torch.randn(5, 4)

scores = torch.exp(scorer(x))
clip_(scores)
weights = scores / scores.sum(-1, keepdim=True)
loss = (weights * torch.arange(3.0)).sum()
loss.backward()

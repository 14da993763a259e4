# label: hazard raises
# why: the checkpointed function adds its bias into its input in place, so the caller's feat is mutated and the recomputation in backward repeats the write on the saved input, which autograd rejects with a version mismatch.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

stem = nn.Linear(4, 6)
mid = nn.Linear(6, 6)
head = nn.Linear(6, 2)
bias = torch.full((6,), 0.5)


def block(h):
    h.add_(bias)  # <-- IPL004
    return torch.tanh(mid(h))


x = torch.randn(3, 4)
feat = stem(x)
y = checkpoint(block, feat, use_reentrant=False)
out = head(y) + feat.sum(dim=-1, keepdim=True)
loss = out.pow(2).sum()
loss.backward()
grad_mid = mid.weight.grad
grad_stem = stem.weight.grad

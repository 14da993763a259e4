# label: hazard raises
# why: the checkpointed helper scales its argument in place; checkpoint saved that input for recomputation (and the caller's residual reuses it), so backward fails the version check
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
attn_proj = nn.Linear(6, 6)
mlp = nn.Linear(6, 6)


def block(hidden, scale):
    hidden.mul_(scale)  # <-- IPL004
    a = torch.softmax(attn_proj(hidden), dim=-1)
    return mlp(a * hidden)


x = torch.randn(3, 6, requires_grad=True)
hidden = x + 0.1
for _ in range(2):
    hidden = hidden + checkpoint(block, hidden, 0.7, use_reentrant=False)
loss = hidden.square().sum()
loss.backward()

out = hidden.detach()
x_grad = x.grad.clone()
proj_grad = attn_proj.weight.grad.clone()

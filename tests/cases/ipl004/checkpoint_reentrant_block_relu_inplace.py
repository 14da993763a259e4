# label: hazard raises
# why: the checkpointed block applies relu_ to its argument; reentrant checkpoint recomputes it in backward on a detached requires-grad leaf copy, so relu_ raises (and the caller's residual already read the rectified h)
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
ln = nn.LayerNorm(8)
fc1 = nn.Linear(8, 16)
fc2 = nn.Linear(16, 8)


def mlp_block(t):
    t.relu_()  # <-- IPL004
    return fc2(torch.relu(fc1(ln(t))))


x = torch.randn(4, 8, requires_grad=True)
h = x * 2.0 - 0.5
y = checkpoint(mlp_block, h, use_reentrant=True)
out = h + y
loss = out.pow(2).mean()
loss.backward()

x_grad = x.grad
fc1_grad = fc1.weight.grad

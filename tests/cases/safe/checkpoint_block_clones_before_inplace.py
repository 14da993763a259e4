# label: safe
# why: the checkpointed block clones its argument before the in-place mul_/relu_, so the saved input and the caller's residual stay intact
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
ln = nn.LayerNorm(8)
fc1 = nn.Linear(8, 16)
fc2 = nn.Linear(16, 8)


def mlp_block(t):
    t = t.clone()
    t.mul_(0.5)
    t.relu_()
    return fc2(torch.relu(fc1(ln(t))))


x = torch.randn(4, 8, requires_grad=True)
h = x * 2.0 - 0.5
y1 = checkpoint(mlp_block, h, use_reentrant=True)
y2 = checkpoint(mlp_block, h + y1, use_reentrant=False)
out = h + y1 + y2
loss = out.pow(2).mean()
loss.backward()

x_grad = x.grad.clone()
fc1_grad = fc1.weight.grad.clone()

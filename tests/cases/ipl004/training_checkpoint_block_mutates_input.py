# label: hazard raises
# why: an activation-checkpointed block scales its input in place, which the checkpoint keeps for recomputation, so backward fails.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
embed = nn.Linear(4, 8)
block_lin = nn.Linear(8, 8)
head = nn.Linear(8, 1)
x = torch.randn(5, 4)
y = torch.randn(5, 1)


def block(h):
    h.mul_(0.5)  # <-- IPL004: the input of a checkpointed function is mutated
    return torch.tanh(block_lin(h))


h0 = embed(x)
h1 = checkpoint(block, h0, use_reentrant=False)
loss = (head(h1) - y).pow(2).mean()
loss.backward()

# label: hazard raises
# why: the checkpointed block scales its input in place, so the recomputation in backward sees an input whose version changed and autograd raises.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

dim = 16
embed = nn.Linear(8, dim)
norm = nn.LayerNorm(dim)
mlp = nn.Sequential(nn.Linear(dim, 32), nn.GELU(), nn.Linear(32, dim))
head = nn.Linear(dim, 4)


def residual_mlp_block(h):
    h.mul_(0.5)  # <-- IPL004: input of a checkpointed function mutated
    return h + mlp(norm(h))


x = torch.randn(4, 8)
h = embed(x)
h = checkpoint(residual_mlp_block, h, use_reentrant=False)
loss = head(h).pow(2).mean()
loss.backward()

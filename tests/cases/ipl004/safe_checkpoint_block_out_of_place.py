# label: safe
# why: the checkpointed block never touches its input in place (the only in-place op is on a local hidden tensor nothing saved), so recomputation in backward matches the forward.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

dim = 16
embed = nn.Linear(8, dim)
norm = nn.LayerNorm(dim)
fc1 = nn.Linear(dim, 32)
fc2 = nn.Linear(32, dim)
head = nn.Linear(dim, 4)


def residual_mlp_block(h):
    hidden = fc1(norm(h))
    hidden.mul_(0.5)
    return h * 0.5 + fc2(torch.nn.functional.gelu(hidden))


x = torch.randn(4, 8)
h = embed(x)
h = checkpoint(residual_mlp_block, h, use_reentrant=False)
loss = head(h).pow(2).mean()
loss.backward()

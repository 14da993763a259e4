# label: hazard raises
# why: the function run under torch.utils.checkpoint scales its input in place, so the recomputation in backward sees a modified input
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class CkptMLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inp = nn.Linear(dim, dim)
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())
        self.scale = 0.5

    def _block(self, h):
        h.mul_(self.scale)  # <-- IPL004
        return self.ff(h)

    def forward(self, x):
        h = self.inp(x)
        return checkpoint(self._block, h, use_reentrant=False)


model = CkptMLP(4)
x = torch.randn(3, 4)
out = model(x)
loss = out.sum()
loss.backward()

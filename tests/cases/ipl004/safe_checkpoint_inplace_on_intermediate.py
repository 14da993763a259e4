# label: safe
# why: inside the checkpointed function the in-place ReLU only touches an intermediate created there, never the checkpoint input
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class CkptFF(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def _ff(self, h):
        y = self.fc1(h)
        y.relu_()
        return self.fc2(y)

    def forward(self, x):
        return x + checkpoint(self._ff, x, use_reentrant=False)


model = CkptFF(4)
x = torch.randn(3, 4, requires_grad=True)
out = model(x)
loss = out.pow(2).sum()
loss.backward()

# label: safe
# why: the checkpointed function only writes in place to its own intermediates (Linear outputs), never to its input.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as cp

torch.manual_seed(0)


class CheckpointedMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def _block(self, x):
        h = self.fc1(x)
        h = F.relu(h, inplace=True)
        h = self.fc2(h)
        h += x
        return h

    def forward(self, x):
        return cp.checkpoint(self._block, x, use_reentrant=False)


model = CheckpointedMLP(8, 24)
inputs = torch.randn(4, 8)
hidden = inputs * 2.0
out = model(hidden)
out.pow(2).mean().backward()

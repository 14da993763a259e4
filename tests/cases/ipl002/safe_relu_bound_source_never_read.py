# label: safe
# why: `act = pre.relu_()` makes pre and act the same tensor, but pre is never read again, so nothing observes a stale value.
import torch
import torch.nn as nn

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 10)
        self.fc2 = nn.Linear(10, 2)

    def forward(self, x):
        pre = self.fc1(x)
        act = pre.relu_()
        return self.fc2(act)


mlp = MLP()
x = torch.randn(4, 6)
out = mlp(x)
out.pow(2).sum().backward()

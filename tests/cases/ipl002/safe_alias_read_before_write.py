# label: safe
# why: every read of the alias `identity` (sum, add, mean - none of which save it) happens before the in-place scaling of x
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaledResidual(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inp = nn.Linear(dim, dim)
        self.bias = nn.Parameter(torch.randn(dim))
        self.gamma = 0.5

    def forward(self, a):
        x = self.inp(a)
        identity = x
        shifted = identity + self.bias
        gate = identity.mean(-1, keepdim=True)
        x.mul_(self.gamma)
        return x + shifted - gate


mod = ScaledResidual(4)
a = torch.randn(3, 4)
out = mod(a)
loss = out.pow(2).sum()
loss.backward()

# label: safe
# why: the in-place fast path writes into z and returns at once; the code after the branch, which reads z, only runs when the fast path was not taken
import torch
import torch.nn as nn

torch.manual_seed(0)


def fast_update(z, delta):
    z += delta
    return z


class Update(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, z, inplace_safe=False):
        if inplace_safe:
            out = fast_update(z, self.proj(z).detach())
            return out
        h = self.norm(z)
        return z + self.proj(h)


block = Update(4)
z0 = torch.randn(3, 4)
y = block(z0 * 1.0)
loss = y.pow(2).sum()
loss.backward()

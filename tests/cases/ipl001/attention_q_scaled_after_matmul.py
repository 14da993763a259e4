# label: hazard raises
# why: the matmul q @ k^T saved q, and the later `q *= ...` modifies it before backward.
import torch
import torch.nn as nn

torch.manual_seed(0)


class TwoPassAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def forward(self, x, rel):
        q, k, v = self.q(x), self.k(x), self.v(x)
        content = q @ k.transpose(-2, -1)
        q *= self.scale  # <-- IPL001: q was saved by the matmul above
        position = q @ rel.transpose(-2, -1)
        attn = torch.softmax(content * self.scale + position, dim=-1)
        return attn @ v


block = TwoPassAttention(8)
x = torch.randn(2, 4, 8)
rel = torch.randn(4, 8)
out = block(x, rel)
out.pow(2).sum().backward()

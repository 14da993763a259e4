# label: safe
# why: a memory-lean SwiGLU does `x1 = F.silu(x1); x1 *= x2` - SiLU saves its input, not its output, and the in-place mul records the old x1 itself - so the product is exact.
import torch
import torch.nn as nn
import torch.nn.functional as F


class SwiGLU(nn.Module):
    def __init__(self, in_features, hidden_features, out_features=None, drop=0.0):
        super().__init__()
        out_features = out_features or in_features
        self.w12 = nn.Linear(in_features, 2 * hidden_features)
        self.drop = nn.Dropout(drop, inplace=True)
        self.w3 = nn.Linear(hidden_features, out_features)

    def forward(self, x):
        x12 = self.w12(x)
        x1, x2 = x12.chunk(2, dim=-1)
        x1 = F.silu(x1)
        x1 *= x2
        hidden = self.drop(x1)
        return self.w3(hidden)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        norm = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return norm * self.weight


class FFNBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = RMSNorm(dim)
        self.ffn = SwiGLU(dim, 2 * dim)

    def forward(self, x):
        return x + self.ffn(self.norm(x))


torch.manual_seed(0)
stack = nn.Sequential(FFNBlock(6), FFNBlock(6))
x = torch.randn(3, 4, 6)
y = stack(x)
loss = y.logsumexp(-1).mean()
loss.backward()

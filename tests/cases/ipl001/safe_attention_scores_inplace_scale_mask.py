# label: safe
# why: the matmul output `scores` is not saved by anything, so scaling and masking it in place before softmax is fine.
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dim = dim

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1)
        scores.mul_(1.0 / math.sqrt(self.dim))
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores.masked_fill_(causal, float("-inf"))
        attn = scores.softmax(dim=-1)
        return self.proj(attn @ v)


attn_block = CausalSelfAttention(8)
x = torch.randn(2, 5, 8)
out = attn_block(x)
out.pow(2).mean().backward()

# label: safe
# why: scaling and masked_fill_ happen on the matmul output before softmax; matmul saves its inputs, not its output.
import math

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class MaskedSelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)
        self.dim = dim

    def forward(self, x, pad_mask):
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = q @ k.transpose(-2, -1)
        scores.div_(math.sqrt(self.dim))
        scores.masked_fill_(pad_mask[:, None, :], float("-inf"))
        attn = F.softmax(scores, dim=-1)
        out = self.out(attn @ v)
        out += x
        return out


layer = MaskedSelfAttention(8)
tokens = torch.randn(2, 5, 8)
pad_mask = torch.tensor([[False] * 5, [False, False, False, True, True]])
out = layer(tokens, pad_mask)
out.pow(2).sum().backward()

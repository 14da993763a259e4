# label: hazard raises
# why: masked_fill_ zeroes padded positions of the softmax output, which softmax saved for its backward.
import math

import torch
from torch import nn

torch.manual_seed(0)


class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.scale = 1.0 / math.sqrt(dim)

    def forward(self, x, pad_mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        attn = scores.softmax(dim=-1)
        attn.masked_fill_(pad_mask[:, None, :], 0.0)  # <-- IPL001: softmax output saved
        return self.proj(attn @ v)


attention = SelfAttention(8)
tokens = torch.randn(2, 5, 8)
lengths = torch.tensor([5, 3])
pad_mask = torch.arange(5)[None, :] >= lengths[:, None]
context = attention(tokens, pad_mask)
loss = context.pow(2).sum()
loss.backward()

# label: hazard raises
# why: masked_fill_ zeroes padded keys in the softmax output, which softmax saved for its backward.
import math

import torch
import torch.nn as nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, key_padding_mask):
        B, T, C = x.shape
        qkv = self.qkv(x).reshape(B, T, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = scores.softmax(dim=-1)
        # make sure padded keys get exactly zero weight
        attn.masked_fill_(key_padding_mask[:, None, None, :], 0.0)  # <-- IPL001
        out = torch.matmul(attn, v)
        out = out.transpose(1, 2).reshape(B, T, C)
        return self.proj(out)


torch.manual_seed(0)
model = MultiHeadSelfAttention(dim=8, num_heads=2)
x = torch.randn(2, 5, 8)
key_padding_mask = torch.tensor([[False, False, False, True, True],
                                 [False, False, False, False, True]])
out = model(x, key_padding_mask)
loss = out.pow(2).mean()
loss.backward()

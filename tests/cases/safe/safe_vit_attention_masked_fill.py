# label: safe
# why: `masked_fill_` is applied to freshly computed attention scores (a matmul times a Python scalar, which saves nothing) before softmax, never to the softmax probabilities.
import math

import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim, num_heads=2, qkv_bias=True):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, key_padding_mask=None):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        if key_padding_mask is not None:
            attn.masked_fill_(key_padding_mask[:, None, None, :], float("-inf"))
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        return x


torch.manual_seed(0)
layer = Attention(8)
norm = nn.LayerNorm(8)
x = torch.randn(2, 4, 8)
pad = torch.tensor([[False, False, False, True], [False, False, True, True]])
y = layer(norm(x), key_padding_mask=pad)
y = y.masked_fill(pad[..., None], 0.0)
loss = y.square().sum() / math.sqrt(y.numel())
loss.backward()

# label: safe
# why: matmul saves its inputs, not its output, so scaling and masking the raw scores in place before softmax is fine
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.h, self.dh = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        qkv = self.qkv(x).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = q @ k.transpose(-2, -1)
        scores /= math.sqrt(self.dh)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        scores.masked_fill_(causal, float("-inf"))
        attn = scores.softmax(-1)
        y = (attn @ v).transpose(1, 2).reshape(b, t, d)
        return self.out(y)


attn_block = CausalSelfAttention(8, 2)
x = torch.randn(2, 5, 8)
y = attn_block(x)
loss = y.pow(2).mean()
loss.backward()
qkv_grad = attn_block.qkv.weight.grad

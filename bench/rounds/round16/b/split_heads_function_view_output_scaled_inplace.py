# label: hazard raises
# why: the custom SplitHeads Function returns (and saves) a transposed view of its clone; the attention layer then scales that view in place, which autograd forbids for views created inside a custom Function
# source: https://github.com/pytorch/pytorch/issues/24413
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class SplitHeads(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, num_heads):
        b, t, d = x.shape
        x2 = x.clone()
        heads = x2.view(b, t, num_heads, d // num_heads).transpose(1, 2)
        ctx.save_for_backward(heads)
        ctx.shape = (b, t, d)
        return heads

    @staticmethod
    def backward(ctx, grad):
        (heads,) = ctx.saved_tensors
        b, t, d = ctx.shape
        return grad.transpose(1, 2).reshape(b, t, d), None


class SelfAttention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.scale = 1.0 / math.sqrt(dim // num_heads)

    def forward(self, x):
        q = SplitHeads.apply(self.q(x), self.num_heads)
        k = SplitHeads.apply(self.k(x), self.num_heads)
        v = SplitHeads.apply(self.v(x), self.num_heads)
        q *= self.scale  # <-- IPL001: in-place on a view returned (and saved) by a custom Function
        attn = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        out = attn @ v
        return out.transpose(1, 2).reshape(x.shape)


layer = SelfAttention(8, 2)
x = torch.randn(2, 3, 8)
out = layer(x)
loss = out.pow(2).mean()
loss.backward()

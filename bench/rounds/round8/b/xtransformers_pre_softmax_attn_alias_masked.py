# label: hazard silent
# why: pre_softmax_attn is just another name for dots, so the later dots.masked_fill_ also overwrites the returned pre-softmax intermediate (and the residual prev_attn fed to the next layer) with mask values
# source: https://github.com/lucidrains/x-transformers/commit/746aebe317e84cbf10e39dfffedc0c5ec768b120
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import einsum

torch.manual_seed(0)

Intermediates = namedtuple('Intermediates', ['pre_softmax_attn', 'post_softmax_attn'])


def exists(val):
    return val is not None


def max_neg_value(tensor):
    return -torch.finfo(tensor.dtype).max


class Attention(nn.Module):
    def __init__(self, dim, dim_head=4, heads=2, causal=False):
        super().__init__()
        self.scale = dim_head ** -0.5
        self.heads = heads
        self.causal = causal
        inner_dim = dim_head * heads
        self.to_q = nn.Linear(dim, inner_dim, bias=False)
        self.to_k = nn.Linear(dim, inner_dim, bias=False)
        self.to_v = nn.Linear(dim, inner_dim, bias=False)
        self.attn_fn = F.softmax
        self.to_out = nn.Linear(inner_dim, dim)

    def forward(self, x, mask=None, prev_attn=None):
        b, n, _ = x.shape
        h = self.heads
        q, k, v = self.to_q(x), self.to_k(x), self.to_v(x)
        q, k, v = map(lambda t: t.view(b, n, h, -1).transpose(1, 2), (q, k, v))

        input_mask = None
        if exists(mask):
            input_mask = mask[:, None, :, None] * mask[:, None, None, :]

        dots = einsum('b h i d, b h j d -> b h i j', q, k) * self.scale
        mask_value = max_neg_value(dots)

        if exists(prev_attn):
            dots = dots + prev_attn

        pre_softmax_attn = dots

        if exists(input_mask):
            dots.masked_fill_(~input_mask, mask_value)  # <-- IPL002: also rewrites pre_softmax_attn, which aliases dots
            del input_mask

        if self.causal:
            i, j = dots.shape[-2:]
            r = torch.arange(i)
            mask = r[None, None, :, None] < r[None, None, None, :]
            dots.masked_fill_(mask, mask_value)  # <-- IPL002: also rewrites pre_softmax_attn, which aliases dots
            del mask

        attn = self.attn_fn(dots, dim=-1)
        post_softmax_attn = attn

        out = einsum('b h i j, b h j d -> b h i d', attn, v)
        out = out.transpose(1, 2).reshape(b, n, -1)

        intermediates = Intermediates(pre_softmax_attn=pre_softmax_attn, post_softmax_attn=post_softmax_attn)
        return self.to_out(out), intermediates


class AttentionLayers(nn.Module):
    def __init__(self, dim, depth, causal=False, residual_attn=False):
        super().__init__()
        self.residual_attn = residual_attn
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([nn.LayerNorm(dim), Attention(dim, causal=causal)]))

    def forward(self, x, mask=None, return_hiddens=False):
        hiddens = []
        intermediates = []
        prev_attn = None
        for norm, block in self.layers:
            hiddens.append(x)
            out, inter = block(norm(x), mask=mask, prev_attn=prev_attn)
            x = x + out
            if self.residual_attn:
                prev_attn = inter.pre_softmax_attn
            intermediates.append(inter)
        if return_hiddens:
            return x, (hiddens, intermediates)
        return x


layers = AttentionLayers(dim=8, depth=2, causal=True, residual_attn=True)
x = torch.randn(2, 5, 8)
mask = torch.tensor([[True, True, True, True, False], [True, True, True, False, False]])
out, (hiddens, intermediates) = layers(x, mask=mask, return_hiddens=True)
loss = out.pow(2).mean()
loss.backward()
pre_softmax_layer0 = intermediates[0].pre_softmax_attn.detach()
pre_softmax_layer1 = intermediates[1].pre_softmax_attn.detach()

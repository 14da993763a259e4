# label: hazard raises
# why: the memory "optimization" turns the residuals into `x += self.attn1(self.norm1(x))`, overwriting x after LayerNorm saved it for backward, which breaks textual-inversion training.
# source: https://github.com/invoke-ai/InvokeAI/issues/508
import torch
import torch.nn as nn
from torch import einsum

torch.manual_seed(0)


class CrossAttention(nn.Module):
    def __init__(self, query_dim, context_dim=None, heads=2, dim_head=4):
        super().__init__()
        inner_dim = dim_head * heads
        context_dim = query_dim if context_dim is None else context_dim
        self.scale = dim_head ** -0.5
        self.heads = heads
        self.to_q = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_k = nn.Linear(context_dim, inner_dim, bias=False)
        self.to_v = nn.Linear(context_dim, inner_dim, bias=False)
        self.to_out = nn.Sequential(nn.Linear(inner_dim, query_dim), nn.Dropout(0.0))

    def forward(self, x, context=None):
        h = self.heads
        q = self.to_q(x)
        context = x if context is None else context
        k = self.to_k(context)
        v = self.to_v(context)
        b, n, _ = q.shape
        q, k, v = (t.reshape(b, -1, h, t.shape[-1] // h).permute(0, 2, 1, 3).reshape(b * h, -1, t.shape[-1] // h) for t in (q, k, v))
        sim = einsum('b i d, b j d -> b i j', q, k) * self.scale
        sim = sim.softmax(dim=-1)
        out = einsum('b i j, b j d -> b i d', sim, v)
        out = out.reshape(b, h, n, -1).permute(0, 2, 1, 3).reshape(b, n, -1)
        return self.to_out(out)


class FeedForward(nn.Module):
    def __init__(self, dim, mult=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim * mult), nn.GELU(), nn.Linear(dim * mult, dim))

    def forward(self, x):
        return self.net(x)


class BasicTransformerBlock(nn.Module):
    def __init__(self, dim, context_dim):
        super().__init__()
        self.attn1 = CrossAttention(query_dim=dim)
        self.ff = FeedForward(dim)
        self.attn2 = CrossAttention(query_dim=dim, context_dim=context_dim)
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.norm3 = nn.LayerNorm(dim)

    def forward(self, x, context=None):
        x += self.attn1(self.norm1(x))  # <-- IPL001: norm1 saved x for backward
        x += self.attn2(self.norm2(x), context=context)  # <-- IPL001: norm2 saved x for backward
        x += self.ff(self.norm3(x))  # <-- IPL001: norm3 saved x for backward
        return x


class EmbeddingManager(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.string_to_param = nn.Parameter(torch.randn(1, dim) * 0.1)

    def forward(self, embedded_text):
        return torch.cat([embedded_text[:, :1], self.string_to_param[None].expand(embedded_text.shape[0], -1, -1), embedded_text[:, 2:]], 1)


block = BasicTransformerBlock(dim=8, context_dim=8)
for p in block.parameters():
    p.requires_grad_(False)
embedding_manager = EmbeddingManager()
proj_in = nn.Conv2d(4, 8, 1)
for p in proj_in.parameters():
    p.requires_grad_(False)

latents = torch.randn(2, 4, 3, 3)
text = torch.randn(2, 5, 8)
context = embedding_manager(text)
x = proj_in(latents).flatten(2).transpose(1, 2)
out = block(x, context=context)
loss = out.pow(2).mean()
loss.backward()

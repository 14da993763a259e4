# label: safe
# why: the fix takes the max of x.clone(), so the amax saves its own copy and the in-place subtraction only touches the nan_to_num output, whose backward needs its input rather than its result.
# source: https://github.com/alexandrosstergiou/progressive-action-prediction/commit/3f2ff82e8aaae713a10058877374a0c08e33c02c
import torch
from torch import nn, einsum
import torch.nn.functional as F

torch.manual_seed(0)


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


def reduce_max(x):
    # einops.reduce(x, '... d -> ... 1', 'max')
    return x.amax(dim=-1, keepdim=True)


class PreNorm(nn.Module):
    def __init__(self, dim, fn, context_dim=None):
        super().__init__()
        self.fn = fn
        self.norm = nn.LayerNorm(dim)
        self.norm_context = nn.LayerNorm(context_dim) if exists(context_dim) else None

    def forward(self, x, **kwargs):
        x = self.norm(x)
        if exists(self.norm_context):
            context = kwargs['context']
            normed_context = self.norm_context(context)
            kwargs.update(context=normed_context)
        return self.fn(x, **kwargs)


class Attention(nn.Module):
    def __init__(self, query_dim, context_dim=None, heads=8, dim_head=64, dropout=0.):
        super().__init__()
        inner_dim = dim_head * heads
        context_dim = default(context_dim, query_dim)
        self.scale = dim_head ** -0.5
        self.heads = heads
        self.temp = 2.0
        self.to_q = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(context_dim, inner_dim * 2, bias=False)
        self.to_out = nn.Sequential(nn.Linear(inner_dim, query_dim), nn.Dropout(dropout))

    def stable_softmax(self, x):
        x = torch.nan_to_num(x)
        x -= reduce_max(x.clone())
        return x.softmax(dim=-1)

    def forward(self, x, context=None, mask=None):
        h = self.heads
        q = self.to_q(x)
        context = default(context, x)
        k, v = self.to_kv(context).chunk(2, dim=-1)
        b, n, _ = q.shape
        q, k, v = map(lambda t: t.reshape(t.shape[0], t.shape[1], h, -1).permute(0, 2, 1, 3).reshape(t.shape[0] * h, t.shape[1], -1), (q, k, v))
        sim = einsum('b i d, b j d -> b i j', q, k) * self.scale
        attn = self.stable_softmax(sim)
        out = einsum('b i j, b j d -> b i d', attn, v)
        out = out.reshape(b, h, n, -1).permute(0, 2, 1, 3).reshape(b, n, -1)
        return self.to_out(out)


def main():
    latent_dim, input_dim = 16, 12
    cross_attn = PreNorm(latent_dim, Attention(latent_dim, input_dim, heads=2, dim_head=8), context_dim=input_dim)
    latents = nn.Parameter(torch.randn(4, latent_dim))
    video_tokens = torch.randn(2, 10, input_dim)
    x = latents.unsqueeze(0).expand(2, -1, -1)
    x = cross_attn(x, context=video_tokens) + x
    logits = x.mean(dim=1)
    loss = F.cross_entropy(logits, torch.tensor([3, 7]))
    loss.backward()
    return loss.detach(), latents.grad


loss, latents_grad = main()

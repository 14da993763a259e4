# label: safe
# why: `t_left, t, t_right = t[...], t[...], t[...]` only rebinds Python names to slices and the rotated `t` is a new tensor, so nothing autograd saved is written in place (the reported "in-place" error did not come from here).
# source: https://github.com/lucidrains/rotary-embedding-torch/pull/31
from math import pi

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import einsum

torch.manual_seed(0)


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


def rotate_half(x):
    x = x.reshape(*x.shape[:-1], -1, 2)
    x1, x2 = x.unbind(dim=-1)
    x = torch.stack((-x2, x1), dim=-1)
    return x.reshape(*x.shape[:-2], -1)


def apply_rotary_emb(freqs, t, start_index=0, scale=1., seq_dim=-2):
    dtype = t.dtype

    if t.ndim == 3:
        seq_len = t.shape[seq_dim]
        freqs = freqs[-seq_len:]

    rot_dim = freqs.shape[-1]
    end_index = start_index + rot_dim

    assert rot_dim <= t.shape[-1], f'feature dimension {t.shape[-1]} is not of sufficient size to rotate in all the positions {rot_dim}'

    t_left, t, t_right = t[..., :start_index], t[..., start_index:end_index], t[..., end_index:]
    t = (t * freqs.cos() * scale) + (rotate_half(t) * freqs.sin() * scale)
    out = torch.cat((t_left, t, t_right), dim=-1)

    return out.type(dtype)


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, theta=10000, learned_freq=False):
        super().__init__()
        freqs = 1. / (theta ** (torch.arange(0, dim, 2)[:(dim // 2)].float() / dim))
        self.freqs = nn.Parameter(freqs, requires_grad=learned_freq)
        self.learned_freq = learned_freq
        self.default_seq_dim = -2

    def get_seq_pos(self, seq_len, device, dtype, offset=0):
        return torch.arange(seq_len, device=device, dtype=dtype) + offset

    def rotate_queries_or_keys(self, t, seq_dim=None, offset=0, scale=None):
        seq_dim = default(seq_dim, self.default_seq_dim)
        device, dtype, seq_len = t.device, t.dtype, t.shape[seq_dim]
        seq = self.get_seq_pos(seq_len, device=device, dtype=dtype, offset=offset)
        freqs = self.forward(seq, seq_len=seq_len, offset=offset)
        return apply_rotary_emb(freqs, t, scale=default(scale, 1.), seq_dim=seq_dim)

    def forward(self, t, seq_len=None, offset=0):
        freqs = self.freqs
        freqs = einsum('..., f -> ... f', t.type(freqs.dtype), freqs)
        freqs = torch.repeat_interleave(freqs, 2, dim=-1)
        return freqs


class Attention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=16):
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(dim, heads * dim_head * 3, bias=False)
        self.to_out = nn.Linear(heads * dim_head, dim)
        self.rotary_emb = RotaryEmbedding(dim=8, learned_freq=True)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        q = self.rotary_emb.rotate_queries_or_keys(q)
        k = self.rotary_emb.rotate_queries_or_keys(k)
        sim = einsum('b h i d, b h j d -> b h i j', q, k) * q.shape[-1] ** -0.5
        attn = sim.softmax(dim=-1)
        out = einsum('b h i j, b h j d -> b h i d', attn, v)
        out = out.transpose(1, 2).reshape(b, n, -1)
        return self.to_out(out)


def main():
    attn = Attention(dim=32)
    x = torch.randn(2, 6, 32)
    out = attn(x)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), attn.to_qkv.weight.grad, attn.rotary_emb.freqs.grad


loss, qkv_grad, freqs_grad = main()

# label: hazard silent
# why: apply_rope_ copies the rotated values back into its argument, so the caller's "unrotated" keys destined for the cache are rotated too
import torch
import torch.nn as nn

torch.manual_seed(0)


def rope_tables(seq_len, dim, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    ang = torch.outer(torch.arange(seq_len).float(), inv_freq)
    return torch.cat([ang, ang], -1).cos(), torch.cat([ang, ang], -1).sin()


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope_(x, cos, sin):
    rotated = x * cos + rotate_half(x) * sin
    x.copy_(rotated)  # <-- IPL004
    return x


seq, dim = 4, 8
wq, wk, wv = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
h = torch.randn(1, seq, dim)
q, k, v = wq(h), wk(h), wv(h)
cos, sin = rope_tables(seq, dim)
q_rot = apply_rope_(q, cos, sin)
k_rot = apply_rope_(k, cos, sin)
attn = torch.softmax(q_rot @ k_rot.transpose(1, 2) / dim ** 0.5, dim=-1)
out = attn @ v
cache_k = k  # the cache is meant to hold pre-rotation keys
loss = out.pow(2).mean() + cache_k.pow(2).mean()
loss.backward()
wk_grad = wk.weight.grad

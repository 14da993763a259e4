# label: safe
# why: rotary cos/sin tables are built in place on fresh buffers, and query/key rotation writes only into a freshly allocated output via slice assignment; q and k themselves are never overwritten.
import torch
import torch.nn as nn


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, max_positions=16, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        t = torch.arange(max_positions, dtype=torch.float32)
        freqs = torch.outer(t, inv_freq)
        cos = torch.empty(max_positions, dim)
        sin = torch.empty(max_positions, dim)
        cos[:, : dim // 2] = freqs.cos()
        cos[:, dim // 2:] = freqs.cos()
        sin[:, : dim // 2] = freqs.sin()
        sin[:, dim // 2:] = freqs.sin()
        self.register_buffer("cos_cached", cos, persistent=False)
        self.register_buffer("sin_cached", sin, persistent=False)

    def forward(self, seq_len):
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


def rotate_half(x):
    half = x.shape[-1] // 2
    out = torch.empty_like(x)
    out[..., :half] = -x[..., half:]
    out[..., half:] = x[..., :half]
    return out


def apply_rotary_pos_emb(q, k, cos, sin):
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class RoPEAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.hd = dim // heads
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.o_proj = nn.Linear(dim, dim, bias=False)
        self.rotary = RotaryEmbedding(self.hd)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        cos, sin = self.rotary(s)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, -1))


torch.manual_seed(0)
attn = RoPEAttention(8, 2)
x = torch.randn(2, 6, 8)
y = attn(x)
loss = (y * torch.linspace(-1, 1, 8)).sum()
loss.backward()

# label: hazard silent
# why: x_even/x_odd are views of q, so writing the rotated even lanes back into q changes x_even before the odd lanes are computed from it.
import torch
import torch.nn as nn


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x):
        # x: (batch, heads, seq, head_dim), rotate interleaved pairs in place
        t = torch.arange(x.shape[-2], dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        cos, sin = freqs.cos(), freqs.sin()
        x_even = x[..., 0::2]
        x_odd = x[..., 1::2]
        x[..., 0::2] = x_even * cos - x_odd * sin  # <-- IPL002
        x[..., 1::2] = x_even * sin + x_odd * cos
        return x


class RotaryAttentionScores(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.rope = RotaryEmbedding(dim // heads)

    def forward(self, h):
        B, T, C = h.shape
        q = self.q_proj(h).view(B, T, self.heads, -1).transpose(1, 2).contiguous()
        k = self.k_proj(h).view(B, T, self.heads, -1).transpose(1, 2).contiguous()
        q, k = self.rope(q), self.rope(k)
        return q @ k.transpose(-2, -1)


torch.manual_seed(0)
model = RotaryAttentionScores(dim=8, heads=2)
h = torch.randn(1, 4, 8)
out = model(h)
loss = out.softmax(-1).mul(torch.arange(4.0)).sum()
loss.backward()

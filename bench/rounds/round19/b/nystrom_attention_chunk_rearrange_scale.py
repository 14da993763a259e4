# label: hazard raises
# why: q comes from to_qkv(x).chunk(3) followed by a head rearrange (view + permute), so `q *= self.scale` modifies a view of a multi-output op in place and autograd raises
# source: https://github.com/lucidrains/nystrom-attention/issues/13
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def moore_penrose_iter_pinv(x, iters=6):
    abs_x = torch.abs(x)
    col = abs_x.sum(dim=-1)
    row = abs_x.sum(dim=-2)
    z = x.transpose(-1, -2) / (torch.max(col) * torch.max(row))
    I = torch.eye(x.shape[-1]).unsqueeze(0)
    for _ in range(iters):
        xz = x @ z
        z = 0.25 * z @ (13 * I - (xz @ (15 * I - (xz @ (7 * I - xz)))))
    return z


def to_heads(t, h):
    b, n, hd = t.shape
    return t.reshape(b, n, h, hd // h).permute(0, 2, 1, 3)  # 'b n (h d) -> b h n d'


class NystromAttention(nn.Module):
    def __init__(self, dim, dim_head=4, heads=2, num_landmarks=2, pinv_iterations=6, residual=True):
        super().__init__()
        inner_dim = heads * dim_head
        self.num_landmarks = num_landmarks
        self.pinv_iterations = pinv_iterations
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_out = nn.Linear(inner_dim, dim)
        self.residual = residual
        if residual:
            self.res_conv = nn.Conv2d(heads, heads, (3, 1), padding=(1, 0), groups=heads, bias=False)

    def forward(self, x):
        b, n, _ = x.shape
        h, m, iters = self.heads, self.num_landmarks, self.pinv_iterations
        remainder = n % m
        if remainder > 0:
            padding = m - remainder
            x = F.pad(x, (0, 0, padding, 0), value=0)
            n = x.shape[1]

        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: to_heads(t, h), (q, k, v))

        q *= self.scale  # <-- IPL001: in-place write on a view of a chunk() output

        l = math.ceil(n / m)
        q_landmarks = q.reshape(b, h, n // l, l, -1).sum(dim=3) / l
        k_landmarks = k.reshape(b, h, n // l, l, -1).sum(dim=3) / l

        sim1 = q @ k_landmarks.transpose(-1, -2)
        sim2 = q_landmarks @ k_landmarks.transpose(-1, -2)
        sim3 = q_landmarks @ k.transpose(-1, -2)
        attn1, attn2, attn3 = map(lambda t: t.softmax(dim=-1), (sim1, sim2, sim3))
        attn2_inv = moore_penrose_iter_pinv(attn2.reshape(b * h, *attn2.shape[-2:]), iters).reshape(attn2.shape)
        out = (attn1 @ attn2_inv) @ (attn3 @ v)
        if self.residual:
            out = out + self.res_conv(v)
        out = out.permute(0, 2, 1, 3).reshape(b, n, -1)
        return self.to_out(out)


class TransLayer(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = NystromAttention(dim=dim)

    def forward(self, x):
        return x + self.attn(self.norm(x))


layer = TransLayer(dim=8)
tokens = torch.randn(2, 6, 8)
out = layer(tokens)
loss = out.mean()
loss.backward()

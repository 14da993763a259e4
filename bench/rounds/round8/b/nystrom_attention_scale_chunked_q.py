# label: hazard raises
# why: without a mask, q is a rearranged view of one chunk of the to_qkv output (a multi-output view), and q *= self.scale modifies it in place, which autograd forbids
# source: https://github.com/lucidrains/nystrom-attention/pull/7 (commit 80702a9494e1fed49348795be074e74d759b0cfd)
from math import ceil

import torch
from torch import nn, einsum

torch.manual_seed(0)


def exists(val):
    return val is not None


def rearrange_heads(t, h):
    # 'b n (h d) -> b h n d'
    b, n, hd = t.shape
    return t.view(b, n, h, hd // h).permute(0, 2, 1, 3)


def reduce_landmarks(t, l):
    # '... (n l) d -> ... n d', 'sum'
    *lead, nl, d = t.shape
    return t.reshape(*lead, nl // l, l, d).sum(dim=-2)


def moore_penrose_iter_pinv(x, iters=6):
    abs_x = torch.abs(x)
    col = abs_x.sum(dim=-1)
    row = abs_x.sum(dim=-2)
    z = x.transpose(-1, -2) / (torch.max(col) * torch.max(row))
    I = torch.eye(x.shape[-1], device=x.device)[None]
    for _ in range(iters):
        xz = x @ z
        z = 0.25 * z @ (13 * I - (xz @ (15 * I - (xz @ (7 * I - xz)))))
    return z


class NystromAttention(nn.Module):
    def __init__(self, dim, dim_head=8, heads=2, num_landmarks=4, pinv_iterations=6, residual=True,
                 residual_conv_kernel=3, eps=1e-8):
        super().__init__()
        self.eps = eps
        inner_dim = heads * dim_head
        self.num_landmarks = num_landmarks
        self.pinv_iterations = pinv_iterations
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_out = nn.Linear(inner_dim, dim)
        self.residual = residual
        if residual:
            padding = residual_conv_kernel // 2
            self.res_conv = nn.Conv2d(heads, heads, (residual_conv_kernel, 1), padding=(padding, 0), groups=heads, bias=False)

    def forward(self, x, mask=None):
        b, n, _ = x.shape
        h, m, iters = self.heads, self.num_landmarks, self.pinv_iterations

        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange_heads(t, h), (q, k, v))

        if exists(mask):
            mask = mask[:, None, :]
            q, k, v = map(lambda t: t * mask[..., None], (q, k, v))

        q *= self.scale  # <-- IPL001: in-place on a view of a chunk() output (multi-output view)

        l = ceil(n / m)
        q_landmarks = reduce_landmarks(q, l)
        k_landmarks = reduce_landmarks(k, l)

        divisor = l
        q_landmarks /= divisor
        k_landmarks /= divisor

        sim1 = einsum('... i d, ... j d -> ... i j', q, k_landmarks)
        sim2 = einsum('... i d, ... j d -> ... i j', q_landmarks, k_landmarks)
        sim3 = einsum('... i d, ... j d -> ... i j', q_landmarks, k)

        attn1, attn2, attn3 = map(lambda t: t.softmax(dim=-1), (sim1, sim2, sim3))
        attn2_inv = moore_penrose_iter_pinv(attn2, iters)
        out = (attn1 @ attn2_inv) @ (attn3 @ v)

        if self.residual:
            out += self.res_conv(v)

        out = out.permute(0, 2, 1, 3).reshape(b, n, -1)
        return self.to_out(out)


attn = NystromAttention(dim=16)
x = torch.randn(2, 8, 16)
out = attn(x)
loss = out.pow(2).mean()
loss.backward()

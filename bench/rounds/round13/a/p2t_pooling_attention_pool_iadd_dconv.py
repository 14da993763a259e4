# label: hazard raises
# why: in P2T's pooling attention `pool += l(pool)` adds the depthwise-conv positional term in place into the pooled map that the depthwise conv just saved as its input.
# source: https://github.com/yuhuan-wu/P2T/issues/5
import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np

torch.manual_seed(0)


class PoolingAttention(nn.Module):
    def __init__(self, dim, num_heads=2, qkv_bias=False, qk_scale=None, attn_drop=0., proj_drop=0.,
                 pool_ratios=[1, 2, 3, 6], d_convs=None):
        super().__init__()
        assert dim % num_heads == 0, f"dim {dim} should be divided by num_heads {num_heads}."
        self.dim = dim
        self.num_heads = num_heads
        self.num_elements = np.array([t * t for t in pool_ratios]).sum()
        head_dim = dim // num_heads
        self.scale = qk_scale or head_dim ** -0.5
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.kv = nn.Sequential(nn.Linear(dim, dim * 2, bias=qkv_bias))
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        self.pool_ratios = pool_ratios
        self.d_convs = d_convs
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, H, W):
        B, N, C = x.shape
        q = self.q(x).reshape(B, N, self.num_heads, C // self.num_heads).permute(0, 2, 1, 3)
        x_ = x.permute(0, 2, 1).reshape(B, C, H, W)

        pools = []
        for (pool_ratio, l) in zip(self.pool_ratios, self.d_convs):
            pool = F.adaptive_avg_pool2d(x_, (round(H / pool_ratio), round(W / pool_ratio)))
            pool += l(pool)  # <-- IPL001: in-place add into the pooled map that the depthwise conv l saved for backward
            pools.append(pool.view(B, C, -1))

        pools = torch.cat(pools, dim=2).permute(0, 2, 1)
        pools = self.norm(pools)

        kv = self.kv(pools).reshape(B, -1, 2, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]

        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)

        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x


class Block(nn.Module):
    def __init__(self, dim, num_heads, pool_ratios, d_convs):
        super().__init__()
        self.attn = PoolingAttention(dim, num_heads=num_heads, qkv_bias=True, pool_ratios=pool_ratios, d_convs=d_convs)
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.Hardswish(), nn.Linear(dim * 2, dim))

    def forward(self, x, H, W):
        x = x + self.attn(self.norm1(x), H, W)
        x = x + self.mlp(self.norm2(x))
        return x


dim = 8
pool_ratios = [1, 2, 4]
d_convs = nn.ModuleList([nn.Conv2d(dim, dim, kernel_size=3, stride=1, padding=1, groups=dim) for temp in pool_ratios])
blocks = nn.ModuleList([Block(dim, 2, pool_ratios, d_convs) for _ in range(2)])
patch_embed = nn.Conv2d(3, dim, kernel_size=4, stride=4)
head = nn.Linear(dim, 5)

img = torch.randn(2, 3, 16, 16)
x = patch_embed(img)
B, C, H, W = x.shape
x = x.flatten(2).transpose(1, 2)
for blk in blocks:
    x = blk(x, H, W)
logits = head(x.mean(1))
loss = F.cross_entropy(logits, torch.tensor([1, 3]))
loss.backward()

# label: hazard raises
# why: each pooled map is fed to its depthwise conv l(pool), which saves pool for the weight gradient, and pool += l(pool) then overwrites that saved input in place.
# source: https://github.com/yuhuan-wu/P2T/commit/4d52408492514cd08fb3ba5afa1792f3a3c7054b
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PoolingAttention(nn.Module):
    def __init__(self, dim, num_heads=2, qkv_bias=False, qk_scale=None, attn_drop=0., proj_drop=0.,
                 pool_ratios=[1, 2, 3, 6]):
        super().__init__()
        assert dim % num_heads == 0, f"dim {dim} should be divided by num_heads {num_heads}."
        self.dim = dim
        self.num_heads = num_heads
        self.num_elements = np.array([t * t for t in pool_ratios]).sum()
        head_dim = dim // num_heads
        self.scale = qk_scale or head_dim ** -0.5
        self.q = nn.Sequential(nn.Linear(dim, dim, bias=qkv_bias))
        self.kv = nn.Sequential(nn.Linear(dim, dim * 2, bias=qkv_bias))
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        self.pool_ratios = pool_ratios
        self.pools = nn.ModuleList()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, H, W, d_convs=None):
        B, N, C = x.shape
        q = self.q(x).reshape(B, N, self.num_heads, C // self.num_heads).permute(0, 2, 1, 3)
        pools = []
        x_ = x.permute(0, 2, 1).reshape(B, C, H, W)
        for (pool_ratio, l) in zip(self.pool_ratios, d_convs):
            pool = F.adaptive_avg_pool2d(x_, (round(H / pool_ratio), round(W / pool_ratio)))
            pool += l(pool)  # <-- IPL001: the depthwise conv saved pool for backward
            pools.append(pool.view(B, C, -1))

        pools = torch.cat(pools, dim=2)
        pools = self.norm(pools.permute(0, 2, 1))
        kv = self.kv(pools).reshape(B, -1, 2, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v)
        x = x.transpose(1, 2).contiguous().reshape(B, N, C)
        x = self.proj(x)
        return x


class Block(nn.Module):
    def __init__(self, dim, num_heads, pool_ratios):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = PoolingAttention(dim, num_heads=num_heads, pool_ratios=pool_ratios)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x, H, W, d_convs=None):
        x = x + self.attn(self.norm1(x), H, W, d_convs=d_convs)
        x = x + self.mlp(self.norm2(x))
        return x


dim, H, W = 8, 6, 6
pool_ratios = [1, 2, 3, 6]
# the depthwise convs are shared by all blocks of a stage, as in P2T
d_convs = nn.ModuleList([nn.Conv2d(dim, dim, kernel_size=3, stride=1, padding=1, groups=dim) for _ in pool_ratios])
blocks = nn.ModuleList([Block(dim, 2, pool_ratios) for _ in range(2)])
head = nn.Linear(dim, 5)

x = torch.randn(2, H * W, dim)
for blk in blocks:
    x = blk(x, H, W, d_convs)
logits = head(x.mean(1))
loss = F.cross_entropy(logits, torch.tensor([1, 3]))
loss.backward()

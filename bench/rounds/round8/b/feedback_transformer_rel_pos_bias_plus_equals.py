# label: safe
# why: sim += pos_emb(sim) and sim.masked_fill_ write into the einsum output, which the einsum/bmm backward does not save; softmax saves only its own output, so results match the out-of-place version
# source: https://github.com/lucidrains/feedback-transformer-pytorch/issues/5 (code before commit 23d19d899b188d97044eebec2aa273072671c7ec)
import math

import torch
from torch import nn, einsum

torch.manual_seed(0)


def exists(val):
    return val is not None


def safe_cat(arr, el, dim=1):
    if not exists(arr):
        return el
    return torch.cat((arr, el), dim=dim)


class RelativePositionBias(nn.Module):
    def __init__(self, causal=False, num_buckets=8, max_distance=16, heads=2):
        super().__init__()
        self.causal = causal
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.relative_attention_bias = nn.Embedding(num_buckets, heads)

    @staticmethod
    def _relative_position_bucket(relative_position, causal=True, num_buckets=32, max_distance=128):
        ret = 0
        n = -relative_position
        if not causal:
            num_buckets //= 2
            ret += (n < 0).long() * num_buckets
            n = torch.abs(n)
        else:
            n = torch.max(n, torch.zeros_like(n))
        max_exact = num_buckets // 2
        is_small = n < max_exact
        val_if_large = max_exact + (
            torch.log(n.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
        ).long()
        val_if_large = torch.min(val_if_large, torch.full_like(val_if_large, num_buckets - 1))
        ret += torch.where(is_small, n, val_if_large)
        return ret

    def forward(self, qk_dots):
        i, j, device = *qk_dots.shape[-2:], qk_dots.device
        q_pos = torch.arange(i, dtype=torch.long, device=device)
        k_pos = torch.arange(j, dtype=torch.long, device=device)
        rel_pos = k_pos[None, :] - q_pos[:, None]
        rp_bucket = self._relative_position_bucket(rel_pos, causal=self.causal, num_buckets=self.num_buckets,
                                                   max_distance=self.max_distance)
        values = self.relative_attention_bias(rp_bucket)
        return values.permute(2, 0, 1)[None]


class Attention(nn.Module):
    def __init__(self, *, dim, heads=2, dim_head=4):
        super().__init__()
        self.heads = heads
        self.scale = dim_head ** -0.5
        inner_dim = dim_head * heads
        self.to_q = nn.Linear(dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(dim, inner_dim * 2, bias=False)
        self.to_out = nn.Linear(inner_dim, dim)

    def forward(self, x, memory, pos_emb=None):
        h, n, device = self.heads, x.shape[1], x.device
        self_attend = n > 1
        q = self.to_q(x) * self.scale
        k, v = memory if exists(memory) else (None, None)
        if self_attend:
            self_k, self_v = self.to_kv(x).chunk(2, dim=-1)
            k = safe_cat(k, self_k, dim=1)
            v = safe_cat(v, self_v, dim=1)
        q, k, v = map(lambda t: t.reshape(t.shape[0], t.shape[1], h, -1).transpose(1, 2), (q, k, v))

        sim = einsum('b h i d, b h j d -> b h i j', q, k)
        i, j = sim.shape[-2:]

        if exists(pos_emb):
            sim += pos_emb(sim)

        if self_attend:
            causal_mask = torch.ones(i, j, device=device).triu_(j - i + 1).bool()
            causal_mask = causal_mask[None, None]
            mask_value = -torch.finfo(q.dtype).max
            sim.masked_fill_(causal_mask, mask_value)

        attn = sim.softmax(dim=-1)
        out = einsum('b h i j, b h j d -> b h i d', attn, v)
        out = out.transpose(1, 2).reshape(out.shape[0], -1, h * out.shape[-1])
        return self.to_out(out)


attn = Attention(dim=8)
pos_emb = RelativePositionBias(causal=True, heads=2)
x = torch.randn(2, 5, 8)
memory = (torch.randn(2, 3, 8), torch.randn(2, 3, 8))
out = attn(x, memory, pos_emb=pos_emb)
loss = out.pow(2).mean()
loss.backward()

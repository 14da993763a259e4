# label: hazard raises
# why: the sinkhorn heads q/k/v are slices of the same merged-heads tensors whose other slices (lq/lk/lv) the local attention already saved, so rotating them by slice assignment bumps the shared version and breaks backward
# source: https://github.com/lucidrains/sinkhorn-transformer/commit/7016f488e3e56cb1b0ce02af00147126edbe9423
from functools import partial, reduce
from operator import mul

import torch
import torch.nn as nn

torch.manual_seed(0)


def rotate_left(t, n, dim=0):
    pre_slices = (slice(None),) * dim
    l = (*pre_slices, slice(n, None))
    r = (*pre_slices, slice(0, n))
    return torch.cat((t[l], t[r]), dim=dim)


def merge_dims(ind_from, ind_to, tensor):
    shape = list(tensor.shape)
    arr_slice = slice(ind_from, ind_to + 1)
    shape[arr_slice] = [reduce(mul, shape[arr_slice])]
    return tensor.reshape(*shape)


def merge_heads(h, v):
    b, t, d = v.shape
    return v.view(b, t, h, -1).transpose(1, 2).reshape(b, h, t, -1)


def split_heads(h, v):
    *_, t, d = v.shape
    return v.view(-1, h, t, d).transpose(1, 2).reshape(-1, t, d * h)


def split_at_index(dim, index, t):
    pre_slices = (slice(None),) * dim
    l = (*pre_slices, slice(None, index))
    r = (*pre_slices, slice(index, None))
    return t[l], t[r]


class LocalAttention(nn.Module):
    def forward(self, q, k, v, q_mask=None, kv_mask=None):
        t = q.shape[-2]
        dots = torch.einsum('bhie,bhje->bhij', q, k) * (q.shape[-1] ** -0.5)
        causal = torch.ones(t, t).triu(1).bool()
        dots = dots.masked_fill(causal, -1e9)
        attn = dots.softmax(dim=-1)
        return torch.einsum('bhij,bhje->bhie', attn, v)


class SinkhornCausalAttention(nn.Module):
    def __init__(self, bucket_size, heads):
        super().__init__()
        self.heads = heads
        self.bucket_size = bucket_size

    def forward(self, q, k, v, q_mask=None, kv_mask=None):
        b, h, t, d_h, bsz = *q.shape, self.bucket_size
        hh = h // 2
        hh_slice = (slice(None), slice(hh, None))

        q[hh_slice] = rotate_left(q[hh_slice], bsz - 1, dim=2)  # <-- IPL001: q shares storage with the lq saved by local attention
        k[hh_slice] = rotate_left(k[hh_slice], bsz - 1, dim=2)  # <-- IPL001: k shares storage with the lk saved by local attention
        v[hh_slice] = rotate_left(v[hh_slice], bsz - 1, dim=2)  # <-- IPL001: v shares storage with the lv saved by local attention

        # merge batch and head
        merge_batch_head = partial(merge_dims, 0, 1)
        q, k, v = map(merge_batch_head, (q, k, v))
        dots = torch.einsum('bie,bje->bij', q, k) * (d_h ** -0.5)
        causal = torch.ones(t, t).triu(1).bool()
        dots = dots.masked_fill(causal, -1e9)
        attn = dots.softmax(dim=-1)
        out = torch.einsum('bij,bje->bie', attn, v)
        return out.reshape(b, h, t, d_h)


class SinkhornSelfAttention(nn.Module):
    def __init__(self, dim, bucket_size, heads=4, n_local_attn_heads=2):
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_kv = nn.Linear(dim, dim * 2, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.n_local_attn_heads = n_local_attn_heads
        self.local_attention = LocalAttention()
        self.sinkhorn_attention = SinkhornCausalAttention(bucket_size, heads - n_local_attn_heads)

    def forward(self, x, input_mask=None):
        b, t, d, h, l_h = *x.shape, self.heads, self.n_local_attn_heads
        q = self.to_q(x)
        kv = self.to_kv(x).chunk(2, dim=-1)
        kv_mask = input_mask

        qkv = (q, *kv)
        merge_heads_fn = partial(merge_heads, h)
        q, k, v = map(merge_heads_fn, qkv)

        split_index_fn = partial(split_at_index, 1, l_h)
        (lq, q), (lk, k), (lv, v) = map(split_index_fn, (q, k, v))
        has_local, has_sinkhorn = map(lambda x: x.shape[1] > 0, (lq, q))

        out = []
        if has_local > 0:
            out.append(self.local_attention(lq, lk, lv, q_mask=input_mask, kv_mask=kv_mask))
        if has_sinkhorn > 0:
            out.append(self.sinkhorn_attention(q, k, v, q_mask=input_mask, kv_mask=kv_mask))

        out = torch.cat(out, dim=1)
        out = split_heads(h, out)
        return self.to_out(out)


attn = SinkhornSelfAttention(dim=16, bucket_size=4, heads=4, n_local_attn_heads=2)
x = torch.randn(2, 8, 16)
out = attn(x)
loss = out.pow(2).mean()
loss.backward()

# label: hazard raises
# why: k and v are head-merged views of to_kv(x).chunk(2), and the causal attention rotates half of their heads by slice assignment in place
# source: https://github.com/lucidrains/sinkhorn-transformer/issues/21 (fixed in commit 7016f48 "remove inplace rotation operations")
from functools import partial

import torch
import torch.nn as nn

torch.manual_seed(0)


def rotate_left(t, n, dim=0):
    pre_slices = (slice(None),) * dim
    l = (*pre_slices, slice(n, None))
    r = (*pre_slices, slice(0, n))
    return torch.cat((t[l], t[r]), dim=dim)


def rotate_right(t, n, dim=0):
    pre_slices = (slice(None),) * dim
    l = (*pre_slices, slice(-n, None))
    r = (*pre_slices, slice(None, -n))
    return torch.cat((t[l], t[r]), dim=dim)


def merge_dims(ind_from, ind_to, tensor):
    shape = list(tensor.shape)
    arr_slice = slice(ind_from, ind_to + 1)
    shape[arr_slice] = [torch.tensor(shape[arr_slice]).prod().item()]
    return tensor.reshape(*shape)


def merge_heads(h, v):
    b, t, d = v.shape
    return v.view(b, t, h, -1).transpose(1, 2)


def split_heads(h, v):
    *_, t, d = v.shape
    return v.view(-1, h, t, d).transpose(1, 2).reshape(-1, t, d * h)


def bucket(buckets, t, dim=1):
    shape = list(t.shape)
    shape[dim:dim + 1] = [buckets, -1]
    return t.reshape(*shape)


def unbucket(t, dim=1):
    shape = list(t.shape)
    shape[dim:dim + 2] = [-1]
    return t.reshape(*shape)


class SinkhornCausalAttention(nn.Module):
    def __init__(self, bucket_size, dim_heads, heads):
        super().__init__()
        self.heads = heads
        self.bucket_size = bucket_size
        self.null_keys = nn.Parameter(torch.randn(heads, 1, dim_heads))
        self.null_values = nn.Parameter(torch.randn(heads, 1, dim_heads))

    def forward(self, q, k, v):
        b, h, t, d_h, bsz = *q.shape, self.bucket_size
        bh = b * h
        hh = h // 2
        buckets = t // bsz

        hh_slice = (slice(None), slice(hh, None))

        q[hh_slice] = rotate_left(q[hh_slice], bsz - 1, dim=2)
        k[hh_slice] = rotate_left(k[hh_slice], bsz - 1, dim=2)  # <-- IPL001: k is a view of to_kv(x).chunk(2) output, rotated in place
        v[hh_slice] = rotate_left(v[hh_slice], bsz - 1, dim=2)  # <-- IPL001: v is a view of to_kv(x).chunk(2) output, rotated in place

        merge_batch_head = partial(merge_dims, 0, 1)
        q, k, v = map(merge_batch_head, (q, k, v))
        b_q, b_k, b_v = map(partial(bucket, buckets), (q, k, v))

        b_null_k = self.null_keys[None, :, None, :, :].expand(b, h, buckets, 1, -1).reshape(bh, buckets, 1, -1)
        b_null_v = self.null_values[None, :, None, :, :].expand(b, h, buckets, 1, -1).reshape(bh, buckets, 1, -1)
        b_k = torch.cat((b_null_k, b_k), dim=2)
        b_v = torch.cat((b_null_v, b_v), dim=2)

        dots = torch.einsum('buie,buje->buij', b_q, b_k) * (d_h ** -0.5)
        mask = torch.ones(bsz, bsz + 1).bool().triu(2)
        dots.masked_fill_(mask, -torch.finfo(dots.dtype).max)
        dots = dots.softmax(dim=-1)

        out = torch.einsum('buij,buje->buie', dots, b_v)
        out = unbucket(out)
        out = out.reshape(b, h, t, d_h)
        out[hh_slice] = rotate_right(out[hh_slice], bsz - 1, dim=2)
        return out


class SinkhornSelfAttention(nn.Module):
    def __init__(self, dim, bucket_size, heads=4):
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_kv = nn.Linear(dim, dim * 2, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.sinkhorn_attention = SinkhornCausalAttention(bucket_size, dim // heads, heads)

    def forward(self, x):
        h = self.heads
        q = self.to_q(x)
        kv = self.to_kv(x).chunk(2, dim=-1)
        qkv = (q, *kv)
        merge_heads_fn = partial(merge_heads, h)
        q, k, v = map(merge_heads_fn, qkv)
        out = self.sinkhorn_attention(q, k, v)
        out = split_heads(h, out)
        return self.to_out(out)


attn = SinkhornSelfAttention(dim=16, bucket_size=4)
x = torch.randn(2, 8, 16)
out = attn(x)
loss = out.pow(2).mean()
loss.backward()

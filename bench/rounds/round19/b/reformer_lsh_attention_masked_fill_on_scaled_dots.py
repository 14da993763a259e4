# label: safe
# why: dots is a fresh product of einsum and a scalar, whose backward saves neither output; masking it in place before logsumexp/exp is equivalent to out-of-place masking
# source: https://github.com/lucidrains/reformer-pytorch/commit/fe17355980831aa6e34b10f6407c23d8750ad946
import torch
import torch.nn as nn

torch.manual_seed(0)


def sort_key_val(t1, t2, dim=-1):
    values, indices = t1.sort(dim=dim)
    t2 = t2.expand_as(t1)
    return values, t2.gather(dim, indices)


def batched_index_select(values, indices):
    last_dim = values.shape[-1]
    return values.gather(1, indices[:, :, None].expand(-1, -1, last_dim))


def make_unit_length(x, epsilon=1e-6):
    norm = x.norm(p=2, dim=-1, keepdim=True)
    return x.div(norm + epsilon)


def look_one_back(x):
    x_extra = torch.cat([x[:, -1:, ...], x[:, :-1, ...]], dim=1)
    return torch.cat([x, x_extra], dim=2)


class LSHAttention(nn.Module):
    def __init__(self, bucket_size=2, n_hashes=2, causal=True, attend_across_buckets=False):
        super().__init__()
        self.bucket_size = bucket_size
        self.n_hashes = n_hashes
        self.causal = causal
        self._attend_across_buckets = attend_across_buckets
        self.dropout = nn.Dropout(0.0)

    def hash_vectors(self, n_buckets, vecs):
        batch_size = vecs.shape[0]
        rotations_shape = (vecs.shape[-1], self.n_hashes, n_buckets // 2)
        random_rotations = torch.randn(rotations_shape).expand(batch_size, -1, -1, -1)
        rotated_vecs = torch.einsum("btf,bfhi->bhti", vecs, random_rotations)
        rotated_vecs = torch.cat([rotated_vecs, -rotated_vecs], dim=-1)
        buckets = torch.argmax(rotated_vecs, dim=-1)
        offsets = torch.arange(self.n_hashes).reshape(1, -1, 1) * n_buckets
        return torch.reshape(buckets + offsets, (batch_size, -1))

    def forward(self, qk, v):
        batch_size, seqlen, _ = qk.shape
        n_buckets = seqlen // self.bucket_size
        n_bins = n_buckets

        buckets = self.hash_vectors(n_buckets, qk)
        ticker = torch.arange(self.n_hashes * seqlen).unsqueeze(0)
        buckets_and_t = (seqlen * buckets + (ticker % seqlen)).detach()

        sbuckets_and_t, sticker = sort_key_val(buckets_and_t, ticker, dim=-1)
        _, undo_sort = sort_key_val(sticker, ticker, dim=-1)

        st = sticker % seqlen
        sqk = batched_index_select(qk, st)
        sv = batched_index_select(v, st)

        bq_t = bkv_t = torch.reshape(st, (batch_size, self.n_hashes * n_bins, -1))
        bqk = torch.reshape(sqk, (batch_size, self.n_hashes * n_bins, -1, sqk.shape[-1]))
        bv = torch.reshape(sv, (batch_size, self.n_hashes * n_bins, -1, sv.shape[-1]))
        bq_buckets = bkv_buckets = torch.reshape(sbuckets_and_t // seqlen, (batch_size, self.n_hashes * n_bins, -1))

        bq = bqk
        bk = make_unit_length(bqk)
        bk = look_one_back(bk)
        bv = look_one_back(bv)
        bkv_t = look_one_back(bkv_t)
        bkv_buckets = look_one_back(bkv_buckets)

        dots = torch.einsum("bhie,bhje->bhij", bq, bk) * (bq.shape[-1] ** -0.5)

        if self.causal:
            mask = bq_t[:, :, :, None] < bkv_t[:, :, None, :]
            dots.masked_fill_(mask, -1e9)

        self_mask = bq_t[:, :, :, None] == bkv_t[:, :, None, :]
        dots.masked_fill_(self_mask, -1e5)

        if not self._attend_across_buckets:
            bucket_mask = bq_buckets[:, :, :, None] != bkv_buckets[:, :, None, :]
            dots.masked_fill_(bucket_mask, -1e9)

        dots_logsumexp = torch.logsumexp(dots, dim=-1, keepdim=True)
        dots = torch.exp(dots - dots_logsumexp)
        dots = self.dropout(dots)

        bo = torch.einsum("buij,buje->buie", dots, bv)
        so = torch.reshape(bo, (batch_size, -1, bo.shape[-1]))
        o = batched_index_select(so, undo_sort)
        o = torch.reshape(o, (batch_size, self.n_hashes, seqlen, o.shape[-1]))
        return o.mean(dim=1)


attn = LSHAttention()
to_qk = nn.Linear(4, 4, bias=False)
to_v = nn.Linear(4, 4, bias=False)
x = torch.randn(2, 8, 4)
out = attn(to_qk(x), to_v(x))
loss = out.pow(2).sum()
loss.backward()

# label: safe
# why: q is scaled in place before anything saves it, and sim (the einsum output) is only accumulated and masked in place before softmax; einsum saved q and k, not sim, so every in-place write in the block is harmless
# source: https://github.com/lucidrains/halonet-pytorch/issues/4
import torch
from torch import nn, einsum
import torch.nn.functional as F

torch.manual_seed(0)


def to(x):
    return {'device': x.device, 'dtype': x.dtype}


def expand_dim(t, dim, k):
    t = t.unsqueeze(dim=dim)
    expand_shape = [-1] * len(t.shape)
    expand_shape[dim] = k
    return t.expand(*expand_shape)


def rel_to_abs(x):
    b, l, m = x.shape
    r = (m + 1) // 2
    col_pad = torch.zeros((b, l, 1), **to(x))
    x = torch.cat((x, col_pad), dim=2)
    flat_x = x.reshape(b, l * (m + 1))
    flat_pad = torch.zeros((b, m - l), **to(x))
    flat_x_padded = torch.cat((flat_x, flat_pad), dim=1)
    final_x = flat_x_padded.reshape(b, l + 1, m)
    final_x = final_x[:, :l, -r:]
    return final_x


def relative_logits_1d(q, rel_k):
    b, h, w, _ = q.shape
    r = (rel_k.shape[0] + 1) // 2
    logits = einsum('b x y d, r d -> b x y r', q, rel_k)
    logits = logits.reshape(b * h, w, -1)
    logits = rel_to_abs(logits)
    logits = logits.reshape(b, h, w, r)
    logits = expand_dim(logits, dim=2, k=r)
    return logits


class RelPosEmb(nn.Module):
    def __init__(self, block_size, rel_size, dim_head):
        super().__init__()
        height = width = rel_size
        scale = dim_head ** -0.5
        self.block_size = block_size
        self.rel_height = nn.Parameter(torch.randn(height * 2 - 1, dim_head) * scale)
        self.rel_width = nn.Parameter(torch.randn(width * 2 - 1, dim_head) * scale)

    def forward(self, q):
        block = self.block_size
        b, n, c = q.shape
        q = q.reshape(b, block, n // block, c)
        rel_logits_w = relative_logits_1d(q, self.rel_width)
        bw, x, i, y, j = rel_logits_w.shape
        rel_logits_w = rel_logits_w.permute(0, 1, 3, 2, 4).reshape(bw, x * y, i * j)

        q = q.permute(0, 2, 1, 3)
        rel_logits_h = relative_logits_1d(q, self.rel_height)
        bh, x, i, y, j = rel_logits_h.shape
        rel_logits_h = rel_logits_h.permute(0, 3, 1, 4, 2).reshape(bh, y * x, j * i)
        return rel_logits_w + rel_logits_h


class HaloAttention(nn.Module):
    def __init__(self, *, dim, block_size, halo_size, dim_head=64, heads=8):
        super().__init__()
        assert halo_size > 0, 'halo size must be greater than 0'
        self.dim = dim
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.block_size = block_size
        self.halo_size = halo_size
        inner_dim = dim_head * heads
        self.rel_pos_emb = RelPosEmb(block_size=block_size, rel_size=block_size + (halo_size * 2), dim_head=dim_head)
        self.to_q = nn.Linear(dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(dim, inner_dim * 2, bias=False)
        self.to_out = nn.Linear(inner_dim, dim)

    def forward(self, x):
        b, c, h, w = x.shape
        block, halo, heads, device = self.block_size, self.halo_size, self.heads, x.device

        q_inp = x.reshape(b, c, h // block, block, w // block, block).permute(0, 2, 4, 3, 5, 1).reshape(-1, block * block, c)

        kv_inp = F.unfold(x, kernel_size=block + halo * 2, stride=block, padding=halo)
        n_blocks = kv_inp.shape[-1]
        kv_inp = kv_inp.reshape(b, c, -1, n_blocks).permute(0, 3, 2, 1).reshape(b * n_blocks, -1, c)

        q = self.to_q(q_inp)
        k, v = self.to_kv(kv_inp).chunk(2, dim=-1)

        def split_heads(t):
            bb, n, hd = t.shape
            return t.reshape(bb, n, heads, hd // heads).permute(0, 2, 1, 3).reshape(bb * heads, n, hd // heads)

        q, k, v = map(split_heads, (q, k, v))

        q *= self.scale

        sim = einsum('b i d, b j d -> b i j', q, k)
        sim += self.rel_pos_emb(q)

        mask = torch.ones(1, 1, h, w, device=device)
        mask = F.unfold(mask, kernel_size=block + (halo * 2), stride=block, padding=halo)
        mask = mask.permute(0, 2, 1).repeat(b, 1, 1)
        mask = mask.repeat_interleave(heads, dim=0).reshape(-1, 1, mask.shape[-1])
        mask = mask.bool()

        max_neg_value = -torch.finfo(sim.dtype).max
        sim.masked_fill_(mask, max_neg_value)

        attn = sim.softmax(dim=-1)
        out = einsum('b i j, b j d -> b i d', attn, v)

        bh, n, d = out.shape
        out = out.reshape(bh // heads, heads, n, d).permute(0, 2, 1, 3).reshape(bh // heads, n, heads * d)
        out = self.to_out(out)

        out = out.reshape(b, h // block, w // block, block, block, c).permute(0, 5, 1, 3, 2, 4).reshape(b, c, h, w)
        return out


attn = HaloAttention(dim=8, block_size=2, halo_size=1, dim_head=4, heads=2)
fmap = torch.randn(2, 8, 4, 4, requires_grad=True)
out = attn(fmap)
loss = out.pow(2).mean()
loss.backward()

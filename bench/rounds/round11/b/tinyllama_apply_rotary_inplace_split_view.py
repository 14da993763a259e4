# label: hazard raises
# why: the custom rotary Function with inplace=True rewrites q and k inside forward without ctx.mark_dirty; q and k are views of one split of the fused qkv projection, so autograd rejects the in-place write on a multi-output view.
# source: https://github.com/jzhang38/TinyLlama/issues/188
import torch
import torch.nn as nn

torch.manual_seed(0)


class ApplyRotaryEmb(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, cos, sin, interleaved=False, inplace=False):
        """
            x: (batch_size, seqlen, nheads, headdim)
            cos, sin: (seqlen, rotary_dim / 2)
        """
        batch, seqlen, nheads, headdim = x.shape
        rotary_seqlen, rotary_dim = cos.shape
        rotary_dim *= 2
        assert rotary_dim <= headdim
        x_ro = x[..., :rotary_dim]
        x1, x2 = x_ro.chunk(2, dim=-1)
        out = torch.empty_like(x) if not inplace else x
        out_ro = out[..., :rotary_dim]
        if inplace:
            o1, o2 = x1, x2
        else:
            o1, o2 = out_ro.chunk(2, dim=-1)
        c = cos[:seqlen, None, :]
        s = sin[:seqlen, None, :]
        r1 = x1 * c - x2 * s
        r2 = x1 * s + x2 * c
        o1.copy_(r1)  # <-- IPL005: writes into the input x (inplace=True) without ctx.mark_dirty
        o2.copy_(r2)  # <-- IPL005: writes into the input x (inplace=True) without ctx.mark_dirty
        if not inplace and rotary_dim < headdim:
            out[..., rotary_dim:].copy_(x[..., rotary_dim:])
        ctx.save_for_backward(cos, sin)
        ctx.interleaved = interleaved
        ctx.inplace = inplace
        return out if not inplace else x

    @staticmethod
    def backward(ctx, do):
        cos, sin = ctx.saved_tensors
        _, seqlen, _, headdim = do.shape
        rotary_dim = cos.shape[-1] * 2
        do1, do2 = do[..., :rotary_dim].chunk(2, dim=-1)
        dx = torch.empty_like(do)
        dx1, dx2 = dx[..., :rotary_dim].chunk(2, dim=-1)
        c = cos[:seqlen, None, :]
        s = sin[:seqlen, None, :]
        dx1.copy_(do1 * c + do2 * s)
        dx2.copy_(-do1 * s + do2 * c)
        if rotary_dim < headdim:
            dx[..., rotary_dim:].copy_(do[..., rotary_dim:])
        return dx, None, None, None, None


apply_rotary_emb_func = ApplyRotaryEmb.apply


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd=16, n_head=4, n_query_groups=4):
        super().__init__()
        self.n_head = n_head
        self.n_query_groups = n_query_groups
        self.head_size = n_embd // n_head
        shape = (n_head + 2 * n_query_groups) * self.head_size
        self.attn = nn.Linear(n_embd, shape, bias=True)
        self.proj = nn.Linear(n_embd, n_embd, bias=True)

    def forward(self, x, rope):
        B, T, C = x.size()
        qkv = self.attn(x)
        q_per_kv = self.n_head // self.n_query_groups
        total_qkv = q_per_kv + 2
        qkv = qkv.view(B, T, self.n_query_groups, total_qkv, self.head_size)
        q, k, v = qkv.split((q_per_kv, 1, 1), dim=-2)
        q = q.reshape(B, T, -1, self.head_size)
        k = k.reshape(B, T, -1, self.head_size)
        v = v.reshape(B, T, -1, self.head_size)
        cos, sin = rope
        q = apply_rotary_emb_func(q, cos, sin, False, True)
        k = apply_rotary_emb_func(k, cos, sin, False, True)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / self.head_size ** 0.5
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.proj(y)


def build_rope_cache(seq_len, n_elem, base=10000):
    theta = 1.0 / (base ** (torch.arange(0, n_elem, 2).float() / n_elem))
    seq_idx = torch.arange(seq_len).float()
    idx_theta = torch.outer(seq_idx, theta)
    return torch.cos(idx_theta), torch.sin(idx_theta)


attn = CausalSelfAttention()
x = torch.randn(2, 5, 16)
rope = build_rope_cache(5, 4)
y = attn(x, rope)
loss = y.pow(2).mean()
loss.backward()

# label: safe
# why: with the fix backward clones dY whenever it is non-contiguous or zero-strided (as it is after a plain .sum()), so the in-place rotary kernel writes into a private buffer instead of the shared expanded gradient.
# source: https://github.com/unslothai/unsloth/pull/4233
import torch
import torch.nn as nn

torch.manual_seed(0)


def _rope_embedding(Q, cos, sin, seqlen, head_dim, n_heads, BACKWARD_PASS=False):
    # stand-in for the Triton kernel: loads both halves, stores the rotation back into Q
    half = head_dim // 2
    Qv = Q.view(-1, seqlen, n_heads, head_dim)
    cos1 = cos[:seqlen].view(1, seqlen, 1, half)
    sin1 = sin[:seqlen].view(1, seqlen, 1, half)
    if BACKWARD_PASS:
        sin1 = -sin1
    Q1 = Qv[..., :half].clone()
    Q2 = Qv[..., half:].clone()
    Qv[..., :half] = Q1 * cos1 - Q2 * sin1
    Qv[..., half:] = Q2 * cos1 + Q1 * sin1
    return Qv.reshape(Q.shape)


class Fast_RoPE_Embedding(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, cos, sin):
        cos, sin = cos.squeeze(), sin.squeeze()
        batch, seq_len, n_heads, head_dim = Q.shape
        Q = Q.clone() if not Q.is_contiguous() or 0 in Q.stride() else Q
        Q = Q.reshape(batch * seq_len, n_heads * head_dim)
        Q = _rope_embedding(Q, cos, sin, seq_len, head_dim, n_heads, BACKWARD_PASS=False)
        ctx.save_for_backward(cos, sin)
        return Q.view(batch, seq_len, n_heads, head_dim)

    @staticmethod
    def backward(ctx, dY):
        batch, seq_len, n_heads, head_dim = dY.shape
        dY = dY.clone() if not dY.is_contiguous() or 0 in dY.stride() else dY
        dY = dY.reshape(batch * seq_len, n_heads * head_dim)
        cos, sin = ctx.saved_tensors
        dY = _rope_embedding(dY, cos, sin, seq_len, head_dim, n_heads, BACKWARD_PASS=True)
        dY = dY.view(batch, seq_len, n_heads, head_dim)
        return dY, None, None


def fast_rope_embedding(Q, K, cos, sin):
    Q = Fast_RoPE_Embedding.apply(Q.transpose(1, 2), cos, sin).transpose(1, 2)
    K = Fast_RoPE_Embedding.apply(K.transpose(1, 2), cos, sin).transpose(1, 2)
    return Q, K


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=16, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        t = torch.arange(max_position_embeddings).float()
        freqs = torch.outer(t, inv_freq)
        self.register_buffer("cos_cached", freqs.cos(), persistent=False)
        self.register_buffer("sin_cached", freqs.sin(), persistent=False)

    def forward(self, seq_len):
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


def main():
    bsz, n_heads, q_len, head_dim = 2, 2, 5, 8
    hidden = torch.randn(bsz, q_len, n_heads * head_dim)
    q_proj = nn.Linear(n_heads * head_dim, n_heads * head_dim, bias=False)
    k_proj = nn.Linear(n_heads * head_dim, n_heads * head_dim, bias=False)
    rotary_emb = LlamaRotaryEmbedding(head_dim)
    Q = q_proj(hidden).view(bsz, q_len, n_heads, head_dim).transpose(1, 2)
    K = k_proj(hidden).view(bsz, q_len, n_heads, head_dim).transpose(1, 2)
    cos, sin = rotary_emb(q_len)
    out = fast_rope_embedding(Q, K, cos, sin)
    (out[0].sum() + out[1].sum()).backward()
    return q_proj.weight.grad, k_proj.weight.grad


q_grad, k_grad = main()

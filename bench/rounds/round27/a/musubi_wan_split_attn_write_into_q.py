# label: hazard raises
# why: with split_attn the per-sample SDPA result is written back into q[i : i + 1], but scaled_dot_product_attention saved those q slices (views of q) for its backward, so the Wan LoRA training loss backward finds q at a newer version.
# source: https://github.com/kohya-ss/musubi-tuner/commit/43071afbcf768b437963b0a1099d2f5bf525f93c (fixed in 544c3269dd91236af4004480e74f4a6c08d48ff1)
from typing import Optional

import torch
import torch.nn as nn

torch.manual_seed(0)


def flash_attention(
    qkv,
    q_lens=None,
    k_lens=None,
    dropout_p=0.0,
    softmax_scale=None,
    q_scale=None,
    causal=False,
    window_size=(-1, -1),
    deterministic=False,
    dtype=torch.bfloat16,
    version=None,
    attn_mode: Optional[str] = "torch",
    split_attn: bool = False,
):
    """
    q:              [B, Lq, Nq, C1].
    k:              [B, Lk, Nk, C1].
    v:              [B, Lk, Nk, C2]. Nq must be divisible by Nk.
    """
    q, k, v = qkv
    qkv.clear()

    half_dtypes = (torch.float16, torch.bfloat16)
    assert dtype in half_dtypes

    # params
    b, lq, lk, out_dtype = q.size(0), q.size(1), k.size(1), q.dtype

    def half(x):
        return x if x.dtype in half_dtypes else x.to(dtype)

    # SDPA
    if attn_mode == "torch" or attn_mode == "sdpa":
        assert not deterministic, "deterministic is not supported in scaled_dot_product_attention."
        if q_scale is not None:
            q = q * q_scale
        q = half(q.transpose(1, 2))
        k = half(k.transpose(1, 2))
        v = half(v.transpose(1, 2))

        if not split_attn:
            q = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=causal, dropout_p=dropout_p, scale=softmax_scale
            )
        else:
            for i in range(q.size(0)):
                out_i = torch.nn.functional.scaled_dot_product_attention(
                    q[i : i + 1], k[i : i + 1], v[i : i + 1], is_causal=causal, dropout_p=dropout_p, scale=softmax_scale
                )
                q[i : i + 1] = out_i  # <-- IPL001
        x = q
        del q, k, v
        x = x.transpose(1, 2).contiguous()
        return x.type(out_dtype)


class WanSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, attn_mode="torch", split_attn=False):
        super().__init__()
        self.dim = dim
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.attn_mode = attn_mode
        self.split_attn = split_attn
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, n, d = *x.shape[:2], self.num_heads, self.head_dim
        q = self.q(x).view(b, s, n, d)
        k = self.k(x).view(b, s, n, d)
        v = self.v(x).view(b, s, n, d)
        qkv = [q, k, v]
        del q, k, v
        x = flash_attention(qkv, k_lens=None, attn_mode=self.attn_mode, split_attn=self.split_attn)
        x = x.flatten(2)
        return self.o(x)


def main():
    attn = WanSelfAttention(dim=16, num_heads=2, attn_mode="torch", split_attn=True)
    latents = torch.randn(2, 6, 16)
    noise_pred = attn(latents)
    loss = noise_pred.pow(2).mean()
    loss.backward()
    return loss.detach(), attn.q.weight.grad, attn.v.weight.grad


loss, q_grad, v_grad = main()

# label: safe
# why: ApplyRotaryEmbeddingInplace (this commit) copies the rotated q/k back into its input with `x.copy_(...)` inside a custom autograd.Function and gives backward only the saved cos/sin; q and k are fresh outputs of scale_for_cosine_sim (MulBackward saved its inputs, not these outputs), so the in-place rotation overwrites nothing any backward node needs and the gradients equal those of the out-of-place apply_rotary_emb.
# source: https://github.com/crowsonkb/k-diffusion/commit/3b1f9e38e6cda7b535f7f4186c2e1d6009168b90
import math
from functools import reduce

import torch
import torch.nn.functional as F
from torch import nn


def zero_init(layer):
    nn.init.zeros_(layer.weight)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)
    return layer


def rms_norm(x, scale, eps):
    dtype = reduce(torch.promote_types, (x.dtype, scale.dtype, torch.float32))
    mean_sq = torch.mean(x.to(dtype)**2, dim=-1, keepdim=True)
    scale = scale.to(dtype) * torch.rsqrt(mean_sq + eps)
    return x * scale.to(x.dtype)


def scale_for_cosine_sim(q, k, scale, eps):
    dtype = reduce(torch.promote_types, (q.dtype, k.dtype, scale.dtype, torch.float32))
    sum_sq_q = torch.sum(q.to(dtype)**2, dim=-1, keepdim=True)
    sum_sq_k = torch.sum(k.to(dtype)**2, dim=-1, keepdim=True)
    sqrt_scale = torch.sqrt(scale.to(dtype))
    scale_q = sqrt_scale * torch.rsqrt(sum_sq_q + eps)
    scale_k = sqrt_scale * torch.rsqrt(sum_sq_k + eps)
    return q * scale_q.to(q.dtype), k * scale_k.to(k.dtype)


class AdaRMSNorm(nn.Module):
    def __init__(self, features, cond_features, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.linear = zero_init(nn.Linear(cond_features, features, bias=False))

    def forward(self, x, cond):
        return rms_norm(x, self.linear(cond)[:, None, None, :] + 1, self.eps)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_emb(x, cos, sin):
    ro_dim = cos.shape[-1] * 2
    assert ro_dim <= x.shape[-1]
    cos = torch.cat((cos, cos), dim=-1)
    sin = torch.cat((sin, sin), dim=-1)
    return torch.cat(
        [x[..., :ro_dim] * cos + rotate_half(x[..., :ro_dim]) * sin, x[..., ro_dim:]], dim=-1,
    )


def _apply_rotary_emb_inplace_forward(x, cos, sin):
    return x.copy_(apply_rotary_emb(x, cos, sin))


def _apply_rotary_emb_inplace_backward(grad_output, cos, sin):
    return apply_rotary_emb(grad_output, cos, -sin)


class ApplyRotaryEmbeddingInplace(torch.autograd.Function):
    @staticmethod
    def forward(x, cos, sin):
        return _apply_rotary_emb_inplace_forward(x, cos, sin)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, cos, sin = inputs
        ctx.save_for_backward(cos, sin)

    @staticmethod
    def backward(ctx, grad_output):
        cos, sin = ctx.saved_tensors
        return _apply_rotary_emb_inplace_backward(grad_output, cos, sin), None, None


def apply_rotary_emb_(x, cos, sin):
    return ApplyRotaryEmbeddingInplace.apply(x, cos, sin)


class AxialRoPE(nn.Module):
    def __init__(self, dim):
        super().__init__()
        freqs = torch.linspace(math.log(math.pi), math.log(10.0 * math.pi), dim // 4 + 1)[:-1].exp()
        self.register_buffer("freqs", freqs)

    def forward(self, pos):
        freqs_h = pos[..., 0:1] * self.freqs.to(pos.dtype)
        freqs_w = pos[..., 1:2] * self.freqs.to(pos.dtype)
        freqs = torch.cat((freqs_h, freqs_w), dim=-1)
        return freqs.cos(), freqs.sin()


class SelfAttentionBlock(nn.Module):
    def __init__(self, d_model, d_head, cond_features, dropout=0.0):
        super().__init__()
        self.d_head = d_head
        self.n_heads = d_model // d_head
        self.norm = AdaRMSNorm(d_model, cond_features)
        self.qkv_proj = nn.Linear(d_model, d_model * 3, bias=False)
        self.scale = nn.Parameter(torch.full([self.n_heads], 10.0))
        self.pos_emb = AxialRoPE(d_head // 2)
        self.dropout = nn.Dropout(dropout)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, pos, cond):
        skip = x
        x = self.norm(x, cond)
        qkv = self.qkv_proj(x)
        n, h, w, _ = qkv.shape
        pos = pos.reshape(*pos.shape[:-3], h * w, pos.shape[-1]).to(qkv.dtype)
        cos, sin = self.pos_emb(pos)
        # rearrange(qkv, "n h w (t nh e) -> t n nh (h w) e", t=3, e=self.d_head)
        q, k, v = qkv.reshape(n, h * w, 3, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)
        q, k = scale_for_cosine_sim(q, k, self.scale[:, None, None] * k.shape[-1]**0.5, 1e-6)
        q = apply_rotary_emb_(q, cos, sin)
        k = apply_rotary_emb_(k, cos, sin)
        x = F.scaled_dot_product_attention(q, k, v)
        # rearrange(x, "n nh (h w) e -> n h w (nh e)")
        x = x.permute(0, 2, 1, 3).reshape(n, h, w, self.n_heads * self.d_head)
        x = self.dropout(x)
        x = self.out_proj(x)
        return x + skip


def make_axial_pos(h, w):
    h_pos = torch.linspace(-1, 1, h + 1)
    w_pos = torch.linspace(-1, 1, w + 1)
    h_pos = (h_pos[:-1] + h_pos[1:]) / 2
    w_pos = (w_pos[:-1] + w_pos[1:]) / 2
    return torch.stack(torch.meshgrid(h_pos, w_pos, indexing="ij"), dim=-1)


def main():
    torch.manual_seed(0)
    block = SelfAttentionBlock(d_model=32, d_head=16, cond_features=8)
    x = torch.randn(2, 4, 4, 32)
    pos = make_axial_pos(4, 4)
    cond = torch.randn(2, 8)
    out = block(x, pos, cond)
    loss = out.pow(2).mean()
    loss.backward()
    return out, loss, block.qkv_proj.weight.grad, block.scale.grad


out, loss, qkv_grad, scale_grad = main()
print(float(loss))

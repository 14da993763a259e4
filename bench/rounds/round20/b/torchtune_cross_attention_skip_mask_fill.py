# label: safe
# why: `attn_out.masked_fill_(skip_mask, 0)` and `mlp_out.masked_fill_(skip_mask, 0)` zero the outputs of the output/down projections, whose values no backward formula saved, and they run before TanhGate multiplies (and saves) them, so gradients are correct.
# source: https://github.com/pytorch/torchtune/commit/1b809c1002a24ed128f1e70e54d7dd38f6a0c610
from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x_fp32 = x.float()
        x_normed = (x_fp32 * torch.rsqrt(x_fp32.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x)
        return x_normed * self.scale


class TanhGate(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.full((1,), 0.5))

    def forward(self, x):
        return x * self.scale.tanh()


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.output_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.kv_cache = None

    def forward(self, x, y, mask=None):
        b, s_x, _ = x.shape
        s_y = y.shape[1]
        q = self.q_proj(x).view(b, s_x, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(y).view(b, s_y, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(y).view(b, s_y, self.num_heads, self.head_dim).transpose(1, 2)
        if mask is not None:
            mask = mask[:, None, :, :]
        output = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        output = output.transpose(1, 2).contiguous().view(b, s_x, -1)
        return self.output_proj(output)


class TransformerCrossAttentionLayer(nn.Module):
    def __init__(self, attn, mlp, ca_norm=None, mlp_norm=None, ca_scale=None, mlp_scale=None):
        super().__init__()
        self.attn = attn
        self.mlp = mlp
        self.ca_norm = ca_norm or nn.Identity()
        self.mlp_norm = mlp_norm or nn.Identity()
        self.ca_scale = ca_scale or nn.Identity()
        self.mlp_scale = mlp_scale or nn.Identity()

    @property
    def cache_enabled(self) -> bool:
        return self.attn.kv_cache is not None

    def _skip_mask(self, mask: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
        if mask is None:
            return None
        if mask.dtype == torch.bool:
            mask = ~mask
        else:
            mask = torch.isneginf(mask)
        mask = torch.all(mask, dim=-1, keepdim=True)
        return mask

    def forward(self, x, *, encoder_input=None, encoder_mask=None, **kwargs: Dict):
        empty_cache = not self.cache_enabled
        if encoder_input is None and empty_cache:
            return x

        # A mask of tokens (x) with no encoder_input
        skip_mask = self._skip_mask(encoder_mask)

        attn_out = self.attn(self.ca_norm(x), encoder_input, mask=encoder_mask)
        if skip_mask is not None:
            attn_out.masked_fill_(skip_mask, 0)

        h = self.ca_scale(attn_out) + x

        mlp_out = self.mlp(self.mlp_norm(h))
        if skip_mask is not None:
            mlp_out.masked_fill_(skip_mask, 0)

        out = h + self.mlp_scale(mlp_out)
        return out


def main():
    dim = 16
    layer = TransformerCrossAttentionLayer(
        attn=MultiHeadAttention(dim, 2),
        mlp=FeedForward(dim, 32),
        ca_norm=RMSNorm(dim),
        mlp_norm=RMSNorm(dim),
        ca_scale=TanhGate(),
        mlp_scale=TanhGate(),
    )
    x = torch.randn(2, 4, dim, requires_grad=True)
    encoder_input = torch.randn(2, 3, dim)
    encoder_mask = torch.ones(2, 4, 3, dtype=torch.bool)
    encoder_mask[:, 0, :] = False  # the text token before the image attends to nothing
    encoder_mask[1, 2, 1:] = False
    out = layer(x, encoder_input=encoder_input, encoder_mask=encoder_mask)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), x.grad, layer.attn.q_proj.weight.grad, layer.ca_scale.scale.grad


loss, x_grad, q_grad, gate_grad = main()

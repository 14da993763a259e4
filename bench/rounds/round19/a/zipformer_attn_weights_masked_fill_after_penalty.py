# label: hazard raises
# why: when the random abs-value penalty fires, penalize_abs_values_gt multiplies x into aux_loss (saving x) and WithLoss returns x itself, so the later attn_output_weights.masked_fill_ overwrites a tensor the penalty's backward still needs.
# source: https://github.com/k2-fsa/icefall/pull/774 (commit 65d7192dca03ba21bff4270add3891c9730491a7)
import random
import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)
random.seed(31)


class WithLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, y: Tensor):
        ctx.y_shape = y.shape
        return x

    @staticmethod
    def backward(ctx, ans_grad: Tensor):
        return ans_grad, torch.ones(ctx.y_shape, dtype=ans_grad.dtype, device=ans_grad.device)


def with_loss(x, y):
    return WithLoss.apply(x, y)


def penalize_abs_values_gt(x: Tensor, limit: float, penalty: float) -> Tensor:
    x_sign = x.sign()
    over_limit = (x.abs() - limit) > 0
    aux_loss = penalty * ((x_sign * over_limit).to(torch.int8) * x)
    x = with_loss(x, aux_loss)
    return x


class RelPositionMultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj = nn.Linear(embed_dim, 3 * embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x, attn_mask=None, key_padding_mask=None):
        seq_len, bsz, _ = x.shape
        num_heads, head_dim = self.num_heads, self.head_dim
        q, k, v = self.in_proj(x).chunk(3, dim=-1)
        q = q.reshape(seq_len, bsz, num_heads, head_dim).permute(1, 2, 0, 3)
        k = k.reshape(seq_len, bsz, num_heads, head_dim).permute(1, 2, 3, 0)
        v = v.reshape(seq_len, bsz * num_heads, head_dim).transpose(0, 1)

        # caution: they are really scores at this point.
        attn_output_weights = torch.matmul(q, k) * 8.0

        if self.training and random.random() < 0.1:
            attn_output_weights = penalize_abs_values_gt(attn_output_weights, limit=25.0, penalty=1.0e-04)

        attn_output_weights = attn_output_weights.view(bsz * num_heads, seq_len, seq_len)

        if attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                attn_output_weights.masked_fill_(attn_mask, float("-inf"))  # <-- IPL001: x was saved by the penalty's mul and WithLoss returned it unchanged
            else:
                attn_output_weights += attn_mask

        if key_padding_mask is not None:
            attn_output_weights = attn_output_weights.view(bsz, num_heads, seq_len, seq_len)
            attn_output_weights = attn_output_weights.masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(2), float("-inf"))
            attn_output_weights = attn_output_weights.view(bsz * num_heads, seq_len, seq_len)

        attn_output_weights = attn_output_weights.softmax(dim=-1)
        attn_output = torch.bmm(attn_output_weights, v)
        attn_output = attn_output.transpose(0, 1).contiguous().view(seq_len, bsz, num_heads * head_dim)
        return self.out_proj(attn_output), attn_output_weights


attn = RelPositionMultiheadAttention(embed_dim=8, num_heads=2)
attn.train()
x = torch.randn(5, 2, 8)
seq_len = 5
# chunk-wise causal mask: True means "cannot attend"
attn_mask = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(diagonal=1)
key_padding_mask = torch.zeros(2, seq_len, dtype=torch.bool)
key_padding_mask[1, -1] = True

out, weights = attn(x, attn_mask=attn_mask, key_padding_mask=key_padding_mask)
loss = out.pow(2).sum()
loss.backward()

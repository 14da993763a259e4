# label: hazard raises
# why: penalize_abs_values_gt routes the attention scores through the custom WithLoss Function, whose forward returns its input as-is (an alias view), and the zipformer attention then masked_fill_'s that view in place, which autograd forbids for views created by a custom Function.
# source: https://github.com/k2-fsa/icefall/commit/1f7741d2b745b96161aa1df226cb5b23d0e9975e (pre-fix egs/librispeech/ASR/pruned_transducer_stateless7/zipformer.py + scaling.py)
import random

import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)
random.seed(2)


class WithLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, y: Tensor):
        ctx.y_shape = y.shape
        return x

    @staticmethod
    def backward(ctx, ans_grad: Tensor):
        return ans_grad, torch.ones(ctx.y_shape, dtype=ans_grad.dtype, device=ans_grad.device)


def with_loss(x, y):
    # returns x but adds y.sum() to the loss function.
    return WithLoss.apply(x, y)


def penalize_abs_values_gt(x: Tensor, limit: float, penalty: float) -> Tensor:
    x_sign = x.sign()
    over_limit = (x.abs() - limit) > 0
    aux_loss = penalty * ((x_sign * over_limit).to(torch.int8) * x)
    x = with_loss(x, aux_loss)
    return x


class RelPositionMultiheadAttention(nn.Module):
    def __init__(self, embed_dim=8, num_heads=2):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.in_proj = nn.Linear(embed_dim, 3 * embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x, attn_mask=None):
        seq_len, bsz, _ = x.shape
        num_heads, head_dim = self.num_heads, self.head_dim
        q, k, v = self.in_proj(x).chunk(3, dim=-1)
        q = q.reshape(seq_len, bsz, num_heads, head_dim).permute(1, 2, 0, 3)
        k = k.reshape(seq_len, bsz, num_heads, head_dim).permute(1, 2, 3, 0)
        v = v.reshape(seq_len, bsz * num_heads, head_dim).transpose(0, 1)

        # caution: they are really scores at this point.
        attn_output_weights = torch.matmul(q, k) * head_dim ** -0.5
        if self.training and random.random() < 0.1:
            attn_output_weights = penalize_abs_values_gt(attn_output_weights, limit=25.0, penalty=1.0e-04)

        # attn_output_weights: (batch, head, time1, time2)
        attn_output_weights = attn_output_weights.view(bsz * num_heads, seq_len, seq_len)

        if attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                attn_output_weights.masked_fill_(attn_mask, float("-inf"))  # <-- IPL005
            else:
                attn_output_weights += attn_mask

        attn_output_weights = attn_output_weights.softmax(dim=-1)
        attn_output = torch.bmm(attn_output_weights, v)
        attn_output = attn_output.transpose(0, 1).contiguous().view(seq_len, bsz, self.embed_dim)
        return self.out_proj(attn_output)


def main():
    attn = RelPositionMultiheadAttention()
    attn.train()
    optimizer = torch.optim.SGD(attn.parameters(), lr=0.01)
    seq_len = 5
    # causal (future) mask, as used for streaming / chunk-wise training
    attn_mask = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)
    losses = []
    for step in range(4):
        x = torch.randn(seq_len, 3, 8)
        out = attn(x, attn_mask=attn_mask)
        loss = out.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses), attn.in_proj.weight.detach().clone()


losses, in_proj_weight = main()

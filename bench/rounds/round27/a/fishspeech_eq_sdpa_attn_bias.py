# label: safe
# why: eq_scaled_dot_product_attention fills the mask into a freshly allocated attn_bias and adds it in place to attn_weight, which is the output of a multiply by a Python scalar that saves nothing, so no tensor needed for backward is overwritten.
# source: https://github.com/fishaudio/fish-speech/commit/1618b7bea285751690cf369d74747c1c459a078f
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, dim, n_head, dropout=0.0):
        super().__init__()
        self.n_head = n_head
        self.head_dim = dim // n_head
        self.dim = dim
        self.dropout = dropout
        self.wqkv = nn.Linear(dim, 3 * dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        bsz, seqlen, _ = x.shape
        q_size = self.n_head * self.head_dim
        q, k, v = self.wqkv(x).split([q_size, q_size, q_size], dim=-1)
        q = q.view(bsz, seqlen, self.n_head, self.head_dim).transpose(1, 2)
        k = k.view(bsz, seqlen, self.n_head, self.head_dim).transpose(1, 2)
        v = v.view(bsz, seqlen, self.n_head, self.head_dim).transpose(1, 2)
        y = self.eq_scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=mask,
            dropout_p=self.dropout if self.training else 0.0,
        )
        y = y.transpose(1, 2).contiguous().view(bsz, seqlen, q_size)
        return self.wo(y)

    def eq_scaled_dot_product_attention(
        self,
        query,
        key,
        value,
        attn_mask=None,
        dropout_p=0.0,
    ) -> torch.Tensor:
        # This is a standard scaled dot product attention
        # It's low efficient, but it doesn't raise cuda error

        L, S = query.size(-2), key.size(-2)
        scale_factor = 1 / math.sqrt(query.size(-1))
        attn_bias = torch.zeros(1, 1, L, S, dtype=query.dtype, device=query.device)

        if attn_mask is not None:
            if attn_mask.dtype == torch.bool:
                attn_bias.masked_fill_(attn_mask.logical_not(), float("-inf"))
            else:
                attn_bias += attn_mask

        attn_weight = query @ key.transpose(-2, -1) * scale_factor
        attn_weight += attn_bias
        attn_weight = torch.softmax(attn_weight, dim=-1)
        attn_weight = torch.dropout(attn_weight, dropout_p, train=True)

        return attn_weight @ value


class FeedForward(nn.Module):
    def __init__(self, dim, intermediate_size) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, intermediate_size, bias=False)
        self.w3 = nn.Linear(dim, intermediate_size, bias=False)
        self.w2 = nn.Linear(intermediate_size, dim, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def main():
    dim, n_head, seqlen = 16, 2, 6
    attention = Attention(dim, n_head)
    feed_forward = FeedForward(dim, 32)
    x = torch.randn(2, seqlen, dim)
    causal = torch.tril(torch.ones(seqlen, seqlen, dtype=torch.bool)).view(1, 1, seqlen, seqlen)
    h = x + attention(x, causal)
    out = h + feed_forward(h)
    float_mask = torch.zeros(1, 1, seqlen, seqlen).masked_fill(~causal, -1e4)
    out2 = out + attention(out, float_mask)
    codebook_logits = out2 @ torch.randn(dim, 10)
    targets = torch.randint(0, 10, (2, seqlen))
    loss = F.cross_entropy(codebook_logits.view(-1, 10), targets.view(-1))
    loss.backward()
    return loss.detach(), attention.wqkv.weight.grad, feed_forward.w1.weight.grad


loss, wqkv_grad, w1_grad = main()

# label: hazard silent
# why: CausalSelfAttention.forward shifts the stationary half of the keys one position forward with `k[:, 1:, :, hd//2:] = k[:, :-1, :, hd//2:]`; source and destination are overlapping views of the same tensor, so the copy reads keys it has already overwritten (on CPU every position ends up with the first key; on GPU the result is order dependent), silently breaking the 1-layer induction shift (fixed by cloning the source slice).
# source: https://github.com/KellerJordan/modded-nanogpt/pull/335
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)
device = "cpu"


def norm(x: Tensor):
    return F.rms_norm(x, (x.size(-1),))


class Yarn(nn.Module):
    def __init__(self, head_dim, max_seq_len, paired=False):
        super().__init__()
        self.head_dim = head_dim
        self.max_seq_len = max_seq_len
        self.paired = paired
        self.reset()

    def rotary(self, x_BTHD):
        assert self.factor1.size(0) >= x_BTHD.size(-3)
        factor1, factor2 = (
            self.factor1[None, : x_BTHD.size(-3), None, :],
            self.factor2[None, : x_BTHD.size(-3), None, :],
        )
        x_flip = x_BTHD.view(*x_BTHD.shape[:-1], x_BTHD.shape[-1] // 2, 2).flip(-1).view(x_BTHD.shape)
        return factor1 * x_BTHD + factor2 * x_flip

    def reset(self):
        angular_freq = (1 / 1024) ** torch.linspace(0, 1, steps=self.head_dim//4, dtype=torch.float32, device=device)
        angular_freq = angular_freq.repeat_interleave(2)
        angular_freq = torch.cat([angular_freq, angular_freq.new_zeros(self.head_dim//2)])
        t = torch.arange(self.max_seq_len, dtype=torch.float32, device=device)
        theta = torch.outer(t, angular_freq)
        self.register_buffer("factor1", theta.cos(), persistent=False)
        self.register_buffer("factor2", theta.sin(), persistent=False)
        self.factor2[..., 1::2] *= -1
        self.attn_scale = 0.1


@dataclass(slots=True)
class AttnArgs:
    sa_lambdas: torch.Tensor
    yarn: Yarn
    key_offset: bool


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, head_dim: int, num_heads: int, paired: bool = False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.dim = dim
        self.hdim = num_heads * head_dim
        self.paired = paired
        assert self.hdim == self.dim, "num_heads * head_dim must equal model_dim"

    def forward(self, x: Tensor, attn_args: AttnArgs, qkvo_w: Tensor):
        B, T = x.size(0), x.size(1) # batch size, sequence length
        assert B == 1, "varlen sequences requires B == 1"
        assert T % 16 == 0
        # unpack attention args
        sa_lambdas, key_offset = attn_args.sa_lambdas, attn_args.key_offset
        yarn = attn_args.yarn

        q, k, v = F.linear(x, sa_lambdas[0] * qkvo_w[:self.dim * 3].type_as(x)).view(B, T, 3 * self.num_heads, self.head_dim).chunk(3, dim=-2)

        q, k = norm(q), norm(k) # QK norm @Grad62304977

        if not self.paired:
            q, k = yarn.rotary(q), yarn.rotary(k)

            if key_offset:
                # shift keys forward for the stationary head dims. Enables 1-layer induction.
                k[:, 1:, :, self.head_dim // 2:] = k[:, :-1, :, self.head_dim // 2:]  # <-- IPL002

        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=True, scale=yarn.attn_scale)
        y = y.transpose(1, 2).contiguous().view(B, T, self.num_heads * self.head_dim)
        y = F.linear(y, sa_lambdas[1] * qkvo_w[self.dim * 3:].type_as(y))
        return y


def main():
    dim, head_dim, num_heads, T = 32, 8, 4, 64
    attn = CausalSelfAttention(dim, head_dim, num_heads)
    yarn = Yarn(head_dim, max_seq_len=T)
    qkvo_w = nn.Parameter(torch.randn(4 * dim, dim) / math.sqrt(dim))
    sa_lambdas = nn.Parameter(torch.tensor([0.5, 0.5]))
    x = torch.randn(1, T, dim)
    y = attn(x, AttnArgs(sa_lambdas=sa_lambdas, yarn=yarn, key_offset=True), qkvo_w)
    loss = y.pow(2).mean()
    loss.backward()
    return y.detach(), qkvo_w.grad.clone()


y, qkvo_w_grad = main()

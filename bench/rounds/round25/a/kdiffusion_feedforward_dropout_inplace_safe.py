# label: safe
# why: nn.Dropout(inplace=True) overwrites the GEGLU product a * gelu(b); the multiply saved its two factors, not its result, so the in-place dropout corrupts nothing that backward needs.
# source: https://github.com/crowsonkb/k-diffusion/blob/6fc92207650ebe3722b6bfd9f9f72e6cc1ea84a2/k_diffusion/models/image_transformer_v1.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def zero_init(layer):
    nn.init.zeros_(layer.weight)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)
    return layer


def _geglu(x):
    a, b = x.chunk(2, dim=-1)
    return a * F.gelu(b)


def _rms_norm(x, scale, eps):
    dtype = torch.promote_types(x.dtype, torch.float32)
    mean_sq = torch.mean(x.to(dtype) ** 2, dim=-1, keepdim=True)
    scale = scale.to(dtype) * torch.rsqrt(mean_sq + eps)
    return x * scale.to(x.dtype)


geglu = _geglu
rms_norm = _rms_norm


class GEGLU(nn.Module):
    def forward(self, x):
        return geglu(x)


class AdaRMSNorm(nn.Module):
    def __init__(self, features, cond_features, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.linear = nn.Linear(cond_features, features, bias=False)

    def forward(self, x, cond):
        return rms_norm(x, self.linear(cond) + 1, self.eps)


class FeedForwardBlock(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.norm = AdaRMSNorm(d_model, d_model)
        self.up_proj = nn.Linear(d_model, d_ff * 2, bias=False)
        self.act = GEGLU()
        self.dropout = nn.Dropout(dropout, inplace=True)
        self.down_proj = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x, cond):
        x = self.norm(x, cond)
        x = self.up_proj(x)
        x = self.act(x)
        x = self.dropout(x)
        x = self.down_proj(x)
        return x


def main():
    block = FeedForwardBlock(d_model=16, d_ff=32, dropout=0.1)
    block.train()
    x = torch.randn(2, 10, 16, requires_grad=True)
    cond = torch.randn(2, 1, 16)
    out = x + block(x, cond)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), x.grad, block.up_proj.weight.grad


loss, x_grad, up_proj_grad = main()

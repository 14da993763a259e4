# label: safe
# why: the fix applies the mask out of place (x = x * mask), so a leaf input that requires grad is never written and autograd sees the masked copy.
# source: https://github.com/fla-org/flash-linear-attention/commit/f7677b7d08111af6ce794796b57272e5aee05c86
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def causal_conv1d(x, weight, bias=None, residual=None, activation=None):
    # x: [B, T, D], weight: [D, W]
    D, W = weight.shape
    y = F.conv1d(x.transpose(1, 2), weight.unsqueeze(1), bias, padding=W - 1, groups=D)
    y = y[..., :x.shape[1]].transpose(1, 2)
    if activation in ('silu', 'swish'):
        y = F.silu(y)
    if residual is not None:
        y = y + residual
    return y


class ShortConvolution(nn.Conv1d):
    def __init__(self, hidden_size, kernel_size, bias=False, activation='silu'):
        super().__init__(hidden_size, hidden_size, kernel_size, groups=hidden_size,
                         padding=kernel_size - 1, bias=bias)
        self.hidden_size = hidden_size
        self.activation = activation

    def forward(self, x, residual=None, mask=None, cache=None, output_final_state=False, cu_seqlens=None):
        B, T, *_ = x.shape
        if mask is not None:
            if cu_seqlens is not None:
                raise ValueError("`mask` and `cu_seqlens` cannot be provided at the same time")
            # Out-of-place: in-place `mul_` breaks autograd when `x` is a leaf
            # tensor that requires grad (e.g. the fused q/k/v short-conv path).
            x = x * mask.unsqueeze(-1)

        y = causal_conv1d(
            x=x,
            weight=self.weight.squeeze(1),
            bias=self.bias,
            residual=residual,
            activation=self.activation,
        )
        return y, cache


def main():
    B, T, D = 2, 6, 8
    q_conv = ShortConvolution(D, kernel_size=4)
    q = torch.randn(B, T, D, requires_grad=True)
    mask = torch.ones(B, T)
    mask[0, :2] = 0  # left padding
    y, _ = q_conv(q, mask=mask)
    y.sum().backward()
    return y.detach(), q.grad.clone(), q_conv.weight.grad.clone()


y, dq, dw = main()

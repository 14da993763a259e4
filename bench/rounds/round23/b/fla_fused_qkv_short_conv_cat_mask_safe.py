# label: safe
# why: fused_qkv_short_conv masks qkv in place, but qkv is the fresh output of torch.cat (CatBackward saves nothing of it) and the mask needs no grad, so the mul_ touches no saved tensor and no caller tensor even when q, k, v are leaves.
# source: https://github.com/fla-org/flash-linear-attention/commit/f7677b7d08111af6ce794796b57272e5aee05c86
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ShortConvolution(nn.Conv1d):
    def __init__(self, hidden_size, kernel_size, bias=False, activation='silu'):
        super().__init__(hidden_size, hidden_size, kernel_size, groups=hidden_size,
                         padding=kernel_size - 1, bias=bias)
        self.activation = activation


def fused_qkv_short_conv(q, k, v, q_conv, k_conv, v_conv, mask=None):
    """Runs the three depthwise short convolutions of q/k/v as one grouped conv."""
    qkv = torch.cat([q, k, v], dim=-1)
    if mask is not None:
        qkv.mul_(mask.unsqueeze(-1))
    qkv_weight = torch.cat(
        [
            q_conv.weight.squeeze(1),
            k_conv.weight.squeeze(1),
            v_conv.weight.squeeze(1),
        ],
        dim=0,
    )
    D, W = qkv_weight.shape
    y = F.conv1d(qkv.transpose(1, 2), qkv_weight.unsqueeze(1), padding=W - 1, groups=D)
    y = F.silu(y[..., :qkv.shape[1]].transpose(1, 2))
    return y.split([q.shape[-1], k.shape[-1], v.shape[-1]], dim=-1)


def main():
    B, T, D = 2, 6, 8
    q_conv, k_conv, v_conv = (ShortConvolution(D, 4) for _ in range(3))
    q = torch.randn(B, T, D, requires_grad=True)
    k = torch.randn(B, T, D, requires_grad=True)
    v = torch.randn(B, T, D, requires_grad=True)
    mask = torch.ones(B, T)
    mask[1, :3] = 0
    q_out, k_out, v_out = fused_qkv_short_conv(q, k, v, q_conv, k_conv, v_conv, mask=mask)
    (q_out * k_out + v_out).sum().backward()
    return q_out.detach(), q.grad.clone(), v_conv.weight.grad.clone()


q_out, dq, dw = main()

# label: hazard raises
# why: RandProjDrop re-randomizes its projection buffer in place at the start of every forward (self.U[:] = U), but matmul(x, self.U) from the previous call in the same ConformerEncoderLayer (self.dropout is applied to four residual branches) saved self.U for backward, so backward finds U at a newer version.
# source: https://github.com/k2-fsa/icefall/commit/4352a16f575f35637c305f0b635a5a89d98cc955 ("Fix bug that relates to modifying U in place"; RandProjDrop used by pruned_transducer_stateless5/conformer.py)
import random

import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)
random.seed(0)


class RandProjDrop(torch.nn.Module):
    """Dropout in a randomly rotated basis: the directions of dropout are orthogonal."""

    def __init__(self, num_channels: int, dropout_rate: float = 0.1, channel_dim: int = -1):
        super(RandProjDrop, self).__init__()
        self.dropout_rate = dropout_rate
        self.channel_dim = channel_dim

        rand_mat = torch.randn(num_channels, num_channels)
        U, _, _ = torch.linalg.svd(rand_mat)
        self.register_buffer('U', U)  # a random orthogonal square matrix.  will be a buffer.

    def forward(self, x: Tensor) -> Tensor:
        if not self.training:
            x = torch.nn.functional.dropout(x, self.dropout_rate, training=False)
        else:
            self._randomize_U()
            x = x.transpose(self.channel_dim, -1)  # (..., num_channels)

            x = torch.matmul(x, self.U)
            x = torch.nn.functional.dropout(x, self.dropout_rate, training=True)
            x = torch.matmul(x, self.U.t())
            x = x.transpose(self.channel_dim, -1)  # (..., num_channels)
        return x

    def _randomize_U(self):
        dim = random.randint(0, 1)
        U = self.U
        num_channels = U.shape[0]
        # pick place to split U in two pieces.
        r = random.randint(1, num_channels - 2)
        U_part1 = U.narrow(dim, 0, r)
        U_part2 = U.narrow(dim, r, num_channels - r)
        U = torch.cat((U_part2, U_part1), dim=dim)
        self.U[:] = U  # <-- IPL001


class ConvolutionModule(nn.Module):
    def __init__(self, channels, kernel_size=3):
        super().__init__()
        self.depthwise_conv = nn.Conv1d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels)
        self.pointwise_conv = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        # (time, batch, channel) -> (batch, channel, time)
        x = x.permute(1, 2, 0)
        x = self.pointwise_conv(torch.nn.functional.silu(self.depthwise_conv(x)))
        return x.permute(2, 0, 1)


class ConformerEncoderLayer(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward=32, dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=0.0)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, dim_feedforward), nn.SiLU(), nn.Linear(dim_feedforward, d_model))
        self.feed_forward_macaron = nn.Sequential(nn.Linear(d_model, dim_feedforward), nn.SiLU(), nn.Linear(dim_feedforward, d_model))
        self.conv_module = ConvolutionModule(d_model)
        self.norm_final = nn.LayerNorm(d_model)
        self.dropout = RandProjDrop(d_model, dropout)

    def forward(self, src):
        # macaron style feed forward module
        src = src + self.dropout(self.feed_forward_macaron(src))
        # multi-headed self-attention module
        src_att = self.self_attn(src, src, src, need_weights=False)[0]
        src = src + self.dropout(src_att)
        # convolution module
        src = src + self.dropout(self.conv_module(src))
        # feed forward module
        src = src + self.dropout(self.feed_forward(src))
        src = self.norm_final(src)
        return src


def main():
    layer = ConformerEncoderLayer(d_model=8, nhead=2)
    layer.train()
    src = torch.randn(6, 2, 8)  # (time, batch, d_model)
    out = layer(src)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), layer.feed_forward_macaron[0].weight.grad


loss, grad = main()

# label: safe
# why: both `+=` land on the output of a causal 3D convolution, and convolution backward never reads its own output, so the in-place sums are harmless (the commit's "may affect backward" worry does not apply).
# source: https://github.com/huggingface/diffusers/commit/8db178f79f570487d5796a7520bf48528d72208b
from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CogVideoXCausalConv3d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, pad_mode="first"):
        super().__init__()
        self.time_kernel_size = kernel_size
        self.pad_mode = pad_mode
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=(0, kernel_size // 2, kernel_size // 2))

    def fake_context_parallel_forward(self, inputs, conv_cache=None):
        if conv_cache is not None:
            inputs = torch.cat([conv_cache, inputs], dim=2)
        else:
            cached_inputs = [inputs[:, :, :1]] * (self.time_kernel_size - 1)
            inputs = torch.cat(cached_inputs + [inputs], dim=2)
        return inputs

    def forward(self, inputs, conv_cache=None):
        inputs = self.fake_context_parallel_forward(inputs, conv_cache)
        conv_cache = inputs[:, :, -self.time_kernel_size + 1:].clone()
        output = self.conv(inputs)
        return output, conv_cache


class CogVideoXResnetBlock3D(nn.Module):
    def __init__(self, in_channels, out_channels=None, dropout=0.0, temb_channels=512, groups=32, eps=1e-6,
                 conv_shortcut=False, pad_mode="first"):
        super().__init__()
        out_channels = out_channels or in_channels
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.nonlinearity = nn.SiLU()
        self.use_conv_shortcut = conv_shortcut
        self.norm1 = nn.GroupNorm(num_channels=in_channels, num_groups=groups, eps=eps)
        self.norm2 = nn.GroupNorm(num_channels=out_channels, num_groups=groups, eps=eps)
        self.conv1 = CogVideoXCausalConv3d(in_channels=in_channels, out_channels=out_channels, kernel_size=3, pad_mode=pad_mode)
        if temb_channels > 0:
            self.temb_proj = nn.Linear(in_features=temb_channels, out_features=out_channels)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = CogVideoXCausalConv3d(in_channels=out_channels, out_channels=out_channels, kernel_size=3, pad_mode=pad_mode)
        if self.in_channels != self.out_channels:
            self.conv_shortcut = nn.Conv3d(in_channels=in_channels, out_channels=out_channels, kernel_size=1, stride=1, padding=0)

    def forward(self, inputs: torch.Tensor, temb: Optional[torch.Tensor] = None,
                conv_cache: Optional[Dict[str, torch.Tensor]] = None):
        new_conv_cache = {}
        conv_cache = conv_cache or {}

        hidden_states = inputs
        hidden_states = self.norm1(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states, new_conv_cache["conv1"] = self.conv1(hidden_states, conv_cache=conv_cache.get("conv1"))

        if temb is not None:
            hidden_states += self.temb_proj(self.nonlinearity(temb))[:, :, None, None, None]

        hidden_states = self.norm2(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states, new_conv_cache["conv2"] = self.conv2(hidden_states, conv_cache=conv_cache.get("conv2"))

        if self.in_channels != self.out_channels:
            inputs = self.conv_shortcut(inputs)

        hidden_states += inputs
        return hidden_states, new_conv_cache


block1 = CogVideoXResnetBlock3D(in_channels=4, out_channels=8, temb_channels=6, groups=2)
block2 = CogVideoXResnetBlock3D(in_channels=8, out_channels=8, temb_channels=6, groups=2)
video_latents = torch.randn(1, 4, 3, 6, 6)
temb = torch.randn(1, 6)
hidden, cache1 = block1(video_latents, temb)
hidden, cache2 = block2(hidden, temb)
# second chunk reuses the causal conv caches
hidden_next, _ = block1(torch.randn(1, 4, 2, 6, 6), temb, conv_cache=cache1)
loss = hidden.pow(2).mean() + hidden_next.pow(2).mean()
loss.backward()

# label: safe
# why: CogVideoXResnetBlock3D adds the time embedding and the shortcut into hidden_states in place, but hidden_states is then the fresh output of conv1/conv2 (Conv3d saves its input and weight, not its output), so no saved tensor is overwritten.
# source: https://github.com/huggingface/diffusers/commit/774700789e4aca2a451012307c98adcb4c94eec7
from typing import Dict, Optional, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CogVideoXSafeConv3d(nn.Conv3d):
    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return super().forward(input)


class CogVideoXCausalConv3d(nn.Module):
    r"""A 3D causal convolution layer that pads the input tensor to ensure causality in CogVideoX Model."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Tuple[int, int, int]],
                 stride: int = 1, dilation: int = 1, pad_mode: str = "constant"):
        super().__init__()
        if isinstance(kernel_size, int):
            kernel_size = (kernel_size,) * 3
        time_kernel_size, height_kernel_size, width_kernel_size = kernel_size
        time_pad = time_kernel_size - 1
        height_pad = (height_kernel_size - 1) // 2
        width_pad = (width_kernel_size - 1) // 2
        self.pad_mode = pad_mode
        self.height_pad = height_pad
        self.width_pad = width_pad
        self.time_pad = time_pad
        self.time_causal_padding = (width_pad, width_pad, height_pad, height_pad, time_pad, 0)
        self.const_padding_conv3d = (0, self.width_pad, self.height_pad)
        self.time_kernel_size = time_kernel_size
        self.conv = CogVideoXSafeConv3d(
            in_channels=in_channels,
            out_channels=out_channels,
            kernel_size=kernel_size,
            stride=stride,
            dilation=dilation,
            padding=0 if self.pad_mode == "replicate" else self.const_padding_conv3d,
            padding_mode="zeros",
        )

    def fake_context_parallel_forward(self, inputs: torch.Tensor, conv_cache: Optional[torch.Tensor] = None):
        if self.pad_mode == "replicate":
            inputs = F.pad(inputs, self.time_causal_padding, mode="replicate")
        else:
            kernel_size = self.time_kernel_size
            if kernel_size > 1:
                cached_inputs = [conv_cache] if conv_cache is not None else [inputs[:, :, :1]] * (kernel_size - 1)
                inputs = torch.cat(cached_inputs + [inputs], dim=2)
        return inputs

    def forward(self, inputs: torch.Tensor, conv_cache: Optional[torch.Tensor] = None):
        inputs = self.fake_context_parallel_forward(inputs, conv_cache)
        if self.pad_mode == "replicate":
            conv_cache = None
        else:
            conv_cache = inputs[:, :, -self.time_kernel_size + 1:].clone()
        output = self.conv(inputs)
        return output, conv_cache


class CogVideoXResnetBlock3D(nn.Module):
    def __init__(self, in_channels: int, out_channels: Optional[int] = None, dropout: float = 0.0,
                 temb_channels: int = 512, groups: int = 32, eps: float = 1e-6, pad_mode: str = "first"):
        super().__init__()
        out_channels = out_channels or in_channels
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.nonlinearity = nn.SiLU()
        self.norm1 = nn.GroupNorm(num_channels=in_channels, num_groups=groups, eps=eps)
        self.norm2 = nn.GroupNorm(num_channels=out_channels, num_groups=groups, eps=eps)
        self.conv1 = CogVideoXCausalConv3d(in_channels=in_channels, out_channels=out_channels, kernel_size=3, pad_mode=pad_mode)
        if temb_channels > 0:
            self.temb_proj = nn.Linear(in_features=temb_channels, out_features=out_channels)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = CogVideoXCausalConv3d(in_channels=out_channels, out_channels=out_channels, kernel_size=3, pad_mode=pad_mode)
        if self.in_channels != self.out_channels:
            self.conv_shortcut = CogVideoXSafeConv3d(in_channels=in_channels, out_channels=out_channels, kernel_size=1, stride=1, padding=0)

    def forward(self, inputs: torch.Tensor, temb: Optional[torch.Tensor] = None,
                conv_cache: Optional[Dict[str, torch.Tensor]] = None) -> torch.Tensor:
        new_conv_cache = {}
        conv_cache = conv_cache or {}

        hidden_states = inputs
        hidden_states = self.norm1(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states, new_conv_cache["conv1"] = self.conv1(hidden_states, conv_cache=conv_cache.get("conv1"))

        if temb is not None:
            hidden_states.add_(self.temb_proj(self.nonlinearity(temb))[:, :, None, None, None])

        hidden_states = self.norm2(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states, new_conv_cache["conv2"] = self.conv2(hidden_states, conv_cache=conv_cache.get("conv2"))

        if self.in_channels != self.out_channels:
            inputs = self.conv_shortcut(inputs)

        hidden_states.add_(inputs)
        return hidden_states, new_conv_cache


def main():
    block1 = CogVideoXResnetBlock3D(4, 8, temb_channels=6, groups=2)
    block2 = CogVideoXResnetBlock3D(8, 8, temb_channels=6, groups=2)
    x = torch.randn(1, 4, 3, 6, 6)
    temb = torch.randn(1, 6)
    h, cache1 = block1(x, temb)
    h, cache2 = block2(h, temb)
    loss = h.pow(2).mean()
    loss.backward()
    return loss.detach(), block1.conv1.conv.weight.grad, block2.temb_proj.weight.grad


loss, conv1_grad, temb_grad = main()

# label: hazard raises
# why: spatial_upsample adds the conv output back into input_interp with add_, but spatial_conv (reflect padding + Conv3d) saved input_interp for backward, so the decoder loss backward sees a bumped version.
# source: https://github.com/huggingface/diffusers/commit/e021f3f0b23c346a8edf2d5c8c4785a3352f3988
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class KVAESafeConv3d(nn.Conv3d):
    r"""
    A 3D convolution layer that splits the input tensor into smaller parts to avoid OOM.
    """

    def forward(self, input: torch.Tensor, write_to: torch.Tensor = None) -> torch.Tensor:
        memory_count = input.numel() * input.element_size() / (10**9)

        if memory_count > 3:
            kernel_size = self.kernel_size[0]
            part_num = math.ceil(memory_count / 2)
            input_chunks = torch.chunk(input, part_num, dim=2)
            output = []
            for i, chunk in enumerate(input_chunks):
                if i == 0 or kernel_size == 1:
                    z = torch.clone(chunk)
                else:
                    z = torch.cat([z[:, :, -kernel_size + 1:], chunk], dim=2)
                output.append(super().forward(z))
            return torch.cat(output, dim=2)
        else:
            if write_to is None:
                return super().forward(input)
            else:
                write_to[...] = super().forward(input)
                return write_to


class KVAECachedPXSUpsample(nn.Module):
    r"""
    A 3D upsampling layer using PixelShuffle with caching.
    """

    def __init__(self, in_channels: int, compress_time: bool, factor: int = 2):
        super().__init__()
        self.temporal_compress = compress_time
        self.factor = factor
        self.shuffle = nn.PixelShuffle(self.factor)

        self.spatial_conv = KVAESafeConv3d(
            in_channels, in_channels, kernel_size=(1, 3, 3), stride=(1, 1, 1), padding=(0, 1, 1),
            padding_mode='reflect'
        )
        self.linear = KVAESafeConv3d(in_channels, in_channels, kernel_size=1, stride=1)

    def spatial_upsample(self, input: torch.Tensor) -> torch.Tensor:
        b, c, t, h, w = input.shape
        input_view = input.permute(0, 2, 1, 3, 4).reshape(b, t * c, h, w)
        input_interp = F.interpolate(input_view, scale_factor=2, mode='nearest')
        input_interp = input_interp.view(b, t, c, 2 * h, 2 * w).permute(0, 2, 1, 3, 4)

        to = torch.empty_like(input_interp)
        out = self.spatial_conv(input_interp, write_to=to)
        input_interp.add_(out)  # <-- IPL001
        return input_interp

    def forward(self, x: torch.Tensor, cache: dict) -> torch.Tensor:
        s_out = self.spatial_upsample(x)
        to = torch.empty_like(s_out)
        lin_out = self.linear(s_out, write_to=to)
        return lin_out


def main():
    conv_in = nn.Conv3d(3, 8, kernel_size=1)
    upsample = KVAECachedPXSUpsample(8, compress_time=False)
    conv_out = nn.Conv3d(8, 3, kernel_size=1)

    z = torch.randn(1, 3, 2, 4, 4)
    target = torch.randn(1, 3, 2, 8, 8)
    h = conv_in(z)
    h = upsample(h, cache={"padding": None})
    recon = conv_out(F.silu(h))
    loss = F.mse_loss(recon, target)
    loss.backward()
    return loss.detach(), upsample.spatial_conv.weight.grad, conv_in.weight.grad


loss, spatial_grad, conv_in_grad = main()

# label: hazard raises
# why: the KVAE video decoder's pixel-shuffle upsampler runs spatial_conv on the interpolated video and then adds the conv output back into input_interp with add_, overwriting the tensor that Conv3d saved to compute its weight gradient.
# source: https://github.com/huggingface/diffusers/commit/e021f3f0b23c346a8edf2d5c8c4785a3352f3988
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class KVAESafeConv3d(nn.Conv3d):
    def forward(self, input, write_to=None):
        memory_count = input.numel() * input.element_size() / (10**9)
        if memory_count > 3:
            part_num = math.ceil(memory_count / 2)
            input_chunks = torch.chunk(input, part_num, dim=2)
            return torch.cat([super().forward(torch.clone(c)) for c in input_chunks], dim=2)
        if write_to is None:
            return super().forward(input)
        write_to[...] = super().forward(input)
        return write_to


class KVAECachedPXSUpsample(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.spatial_conv = KVAESafeConv3d(
            in_channels, in_channels, kernel_size=(1, 3, 3), stride=(1, 1, 1), padding=(0, 1, 1),
            padding_mode="reflect",
        )
        self.linear = KVAESafeConv3d(in_channels, in_channels, kernel_size=1, stride=1)

    def spatial_upsample(self, input):
        b, c, t, h, w = input.shape
        input_view = input.permute(0, 2, 1, 3, 4).reshape(b, t * c, h, w)
        input_interp = F.interpolate(input_view, scale_factor=2, mode="nearest")
        input_interp = input_interp.view(b, t, c, 2 * h, 2 * w).permute(0, 2, 1, 3, 4)

        to = torch.empty_like(input_interp)
        out = self.spatial_conv(input_interp, write_to=to)
        input_interp.add_(out)  # <-- IPL001: overwrites the conv input saved for its weight gradient
        return input_interp

    def forward(self, x):
        s_out = self.spatial_upsample(x)
        to = torch.empty_like(s_out)
        return self.linear(s_out, write_to=to)


conv_in = nn.Conv3d(3, 4, kernel_size=1)
upsample = KVAECachedPXSUpsample(4)
conv_out = nn.Conv3d(4, 3, kernel_size=1)

latent = torch.randn(1, 3, 2, 4, 4)
target = torch.randn(1, 3, 2, 8, 8)
recon = conv_out(upsample(conv_in(latent)))
loss = F.mse_loss(recon, target)
loss.backward()
grad = upsample.spatial_conv.weight.grad.clone()

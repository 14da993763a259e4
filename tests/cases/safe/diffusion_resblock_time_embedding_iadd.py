# label: safe
# why: the time embedding is added with += into a conv output and the skip is added into the final conv output; convs save their inputs, not their outputs, so nothing saved is overwritten.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, in_ch, out_ch, temb_ch, groups=2):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_ch)
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.temb_proj = nn.Linear(temb_ch, out_ch)
        self.norm2 = nn.GroupNorm(groups, out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
        self.skip = nn.Conv2d(in_ch, out_ch, 1) if in_ch != out_ch else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h += self.temb_proj(F.silu(temb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        h += self.skip(x)
        return h


class TinyDenoiser(nn.Module):
    def __init__(self, ch=4, temb_ch=8):
        super().__init__()
        self.temb_ch = temb_ch
        self.temb = nn.Sequential(nn.Linear(temb_ch, temb_ch), nn.SiLU(), nn.Linear(temb_ch, temb_ch))
        self.conv_in = nn.Conv2d(1, ch, 3, padding=1)
        self.block1 = ResBlock(ch, 2 * ch, temb_ch)
        self.block2 = ResBlock(2 * ch, 2 * ch, temb_ch)
        self.conv_out = nn.Conv2d(2 * ch, 1, 3, padding=1)

    def forward(self, x, t):
        temb = self.temb(timestep_embedding(t, self.temb_ch))
        h = self.conv_in(x)
        h = self.block2(self.block1(h, temb), temb)
        return self.conv_out(F.silu(h))


torch.manual_seed(0)
model = TinyDenoiser()
x0 = torch.randn(2, 1, 6, 6)
noise = torch.randn_like(x0)
t = torch.tensor([3, 17])
out = model(x0 + 0.5 * noise, t)
loss = F.mse_loss(out, noise)
loss.backward()

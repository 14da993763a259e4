# label: safe
# why: diffusers-style tiled VAE decoding runs under torch.no_grad and accumulates overlapping tiles into freshly allocated canvas/weight tensors with in-place slice updates.
import torch
import torch.nn as nn


class TinyDecoder(nn.Module):
    def __init__(self, latent_ch=2, out_ch=3):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(latent_ch, 8, 3, padding=1),
            nn.SiLU(inplace=True),
            nn.Upsample(scale_factor=2, mode="nearest"),
            nn.Conv2d(8, out_ch, 3, padding=1),
        )

    def forward(self, z):
        return self.net(z)


def blend_weights(size):
    ramp = torch.linspace(0.1, 1.0, size // 2)
    w1d = torch.cat([ramp, ramp.flip(0)])
    return w1d[:, None] * w1d[None, :]


@torch.no_grad()
def tiled_decode(decoder, z, tile=4, overlap=2, scale=2):
    b, _, h, w = z.shape
    out = torch.zeros(b, 3, h * scale, w * scale)
    weight = torch.zeros(1, 1, h * scale, w * scale)
    wt = blend_weights(tile * scale)
    stride = tile - overlap
    for i in range(0, h - overlap, stride):
        for j in range(0, w - overlap, stride):
            tile_z = z[:, :, i:i + tile, j:j + tile]
            dec = decoder(tile_z)
            ys, xs = i * scale, j * scale
            out[:, :, ys:ys + tile * scale, xs:xs + tile * scale] += dec * wt
            weight[:, :, ys:ys + tile * scale, xs:xs + tile * scale] += wt
    out /= weight
    out.clamp_(-1, 1)
    return out


torch.manual_seed(0)
decoder = TinyDecoder()
latents = torch.randn(1, 2, 8, 8)
image = tiled_decode(decoder, latents)
with torch.no_grad():
    full = decoder(latents).clamp(-1, 1)

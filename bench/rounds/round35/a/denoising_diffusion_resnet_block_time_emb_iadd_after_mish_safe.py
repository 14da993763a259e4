# label: safe
# why: Before the ConvNeXt rewrite, denoising-diffusion-pytorch's ResnetBlock added the time embedding with `h += self.mlp(time_emb)[:, :, None, None]` onto the output of Block (conv, GroupNorm, Mish); Mish is `x * tanh(softplus(x))`, whose backward saved its inputs, not the product, so the in-place add leaves every saved tensor intact and the diffusion loss back-propagates normally.
# source: https://github.com/lucidrains/denoising-diffusion-pytorch/commit/91cff459394b784f870f3998023439796c95b7ca
import math

import torch
import torch.nn.functional as F
from torch import nn


def exists(x):
    return x is not None


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        device = x.device
        half_dim = self.dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, device=device) * -emb)
        emb = x[:, None] * emb[None, :]
        emb = torch.cat((emb.sin(), emb.cos()), dim=-1)
        return emb


class Mish(nn.Module):
    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


class Block(nn.Module):
    def __init__(self, dim, dim_out, groups=8):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim_out, 3, padding=1),
            nn.GroupNorm(groups, dim_out),
            Mish()
        )

    def forward(self, x):
        return self.block(x)


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, *, time_emb_dim=None, groups=8):
        super().__init__()
        self.mlp = nn.Sequential(
            Mish(),
            nn.Linear(time_emb_dim, dim_out)
        ) if exists(time_emb_dim) else None

        self.block1 = Block(dim, dim_out)
        self.block2 = Block(dim_out, dim_out)
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb):
        h = self.block1(x)

        if exists(self.mlp):
            h += self.mlp(time_emb)[:, :, None, None]

        h = self.block2(h)
        return h + self.res_conv(x)


class Unet(nn.Module):
    def __init__(self, dim=16, channels=3):
        super().__init__()
        self.time_mlp = nn.Sequential(SinusoidalPosEmb(dim), nn.Linear(dim, dim * 4), Mish(), nn.Linear(dim * 4, dim))
        self.init_conv = nn.Conv2d(channels, dim, 3, padding=1)
        self.down = ResnetBlock(dim, dim * 2, time_emb_dim=dim)
        self.mid = ResnetBlock(dim * 2, dim * 2, time_emb_dim=dim)
        self.up = ResnetBlock(dim * 4, dim, time_emb_dim=dim)
        self.final_conv = nn.Conv2d(dim, channels, 1)

    def forward(self, x, time):
        t = self.time_mlp(time)
        x = self.init_conv(x)
        h = self.down(x, t)
        x = self.mid(h, t)
        x = self.up(torch.cat((x, h), dim=1), t)
        return self.final_conv(x)


def cosine_beta_schedule(timesteps, s=0.008):
    steps = timesteps + 1
    x = torch.linspace(0, timesteps, steps)
    alphas_cumprod = torch.cos(((x / timesteps) + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0, 0.9999)


class GaussianDiffusion(nn.Module):
    def __init__(self, denoise_fn, timesteps=100):
        super().__init__()
        self.denoise_fn = denoise_fn
        self.num_timesteps = timesteps
        betas = cosine_beta_schedule(timesteps)
        alphas_cumprod = torch.cumprod(1. - betas, dim=0)
        self.register_buffer('sqrt_alphas_cumprod', torch.sqrt(alphas_cumprod))
        self.register_buffer('sqrt_one_minus_alphas_cumprod', torch.sqrt(1. - alphas_cumprod))

    def q_sample(self, x_start, t, noise):
        return (self.sqrt_alphas_cumprod[t][:, None, None, None] * x_start +
                self.sqrt_one_minus_alphas_cumprod[t][:, None, None, None] * noise)

    def p_losses(self, x_start, t):
        noise = torch.randn_like(x_start)
        x_noisy = self.q_sample(x_start=x_start, t=t, noise=noise)
        x_recon = self.denoise_fn(x_noisy, t)
        return (noise - x_recon).abs().mean()

    def forward(self, x):
        b = x.shape[0]
        t = torch.randint(0, self.num_timesteps, (b,)).long()
        return self.p_losses(x, t)


def main():
    torch.manual_seed(0)
    model = Unet(dim=16)
    diffusion = GaussianDiffusion(model, timesteps=100)
    images = torch.rand(2, 3, 8, 8) * 2 - 1
    loss = diffusion(images)
    loss.backward()
    return loss, model


loss, model = main()
print(float(loss))

# label: safe
# why: The fixed random_reupsample clones `x` first, so the boolean-mask writes of the re-upsampled waveforms go into a private copy; the caller's clean waveform stays the diffusion target and only the conditioning channel is degraded.
# source: https://github.com/archinetai/audio-diffusion-pytorch/commit/595075925f6e106b7dbe312034b8aea3cb8b05ad
import math
from typing import Optional, Sequence, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def exists(val):
    return val is not None


def default(val, d):
    if exists(val):
        return val
    return d() if callable(d) else d


def to_list(val):
    if isinstance(val, tuple):
        return list(val)
    if isinstance(val, list):
        return val
    return [val]


def resample(waveforms: Tensor, factor_in: int, factor_out: int, rolloff: float = 0.99,
             lowpass_filter_width: int = 6) -> Tensor:
    """Resamples a waveform using sinc interpolation, adapted from torchaudio"""
    b, c, length = waveforms.shape
    length_target = int(factor_out * length / factor_in)
    d = dict(device=waveforms.device, dtype=waveforms.dtype)

    base_factor = min(factor_in, factor_out) * rolloff
    width = math.ceil(lowpass_filter_width * factor_in / base_factor)
    idx = torch.arange(-width, width + factor_in, **d)[None, None] / factor_in
    t = torch.arange(0, -factor_out, step=-1, **d)[:, None, None] / factor_out + idx
    t = (t * base_factor).clamp(-lowpass_filter_width, lowpass_filter_width) * math.pi

    window = torch.cos(t / lowpass_filter_width / 2) ** 2
    scale = base_factor / factor_in
    kernels = torch.where(t == 0, torch.tensor(1.0).to(t), t.sin() / t)
    kernels *= window * scale

    waveforms = waveforms.reshape(b * c, length)
    waveforms = F.pad(waveforms, (width, width + factor_in))
    resampled = F.conv1d(waveforms[:, None], kernels, stride=factor_in)
    resampled = resampled.reshape(b, c, factor_out, -1).transpose(2, 3).reshape(b, c, -1)
    return resampled[..., :length_target]


def downsample(waveforms: Tensor, factor: int, **kwargs) -> Tensor:
    return resample(waveforms, factor_in=factor, factor_out=1, **kwargs)


def upsample(waveforms: Tensor, factor: int, **kwargs) -> Tensor:
    return resample(waveforms, factor_in=1, factor_out=factor, **kwargs)


class LogNormalDistribution:
    def __init__(self, mean: float, std: float):
        self.mean = mean
        self.std = std

    def __call__(self, num_samples, device=torch.device("cpu")) -> Tensor:
        normal = self.mean + self.std * torch.randn((num_samples,), device=device)
        return normal.exp()


class UNet1d(nn.Module):
    """Tiny stand-in for the conditional UNet1d: context channels are concatenated to the input."""

    def __init__(self, in_channels: int, channels: int, context_channels: Sequence[int] = ()):
        super().__init__()
        ctx = sum(context_channels)
        self.to_in = nn.Conv1d(in_channels + ctx, channels, kernel_size=3, padding=1)
        self.to_time = nn.Linear(1, channels)
        self.mid = nn.Conv1d(channels, channels, kernel_size=3, padding=1)
        self.to_out = nn.Conv1d(channels, in_channels, kernel_size=3, padding=1)

    def forward(self, x: Tensor, t: Tensor, channels_list: Optional[Sequence[Tensor]] = None) -> Tensor:
        if exists(channels_list):
            x = torch.cat([x, *channels_list], dim=1)
        h = self.to_in(x) + self.to_time(t[:, None])[..., None]
        h = self.mid(F.silu(h))
        return self.to_out(F.silu(h))


class Diffusion(nn.Module):
    """Elucidated Diffusion: https://arxiv.org/abs/2206.00364"""

    def __init__(self, net: nn.Module, *, sigma_distribution, sigma_data: float, dynamic_threshold: float = 0.0):
        super().__init__()
        self.net = net
        self.sigma_data = sigma_data
        self.sigma_distribution = sigma_distribution
        self.dynamic_threshold = dynamic_threshold

    def get_scale_weights(self, sigmas: Tensor) -> Tuple[Tensor, ...]:
        sigma_data = self.sigma_data
        sigmas_padded = sigmas.view(-1, 1, 1)
        c_skip = (sigma_data ** 2) / (sigmas_padded ** 2 + sigma_data ** 2)
        c_out = sigmas_padded * sigma_data * (sigma_data ** 2 + sigmas_padded ** 2) ** -0.5
        c_in = (sigmas_padded ** 2 + sigma_data ** 2) ** -0.5
        c_noise = torch.log(sigmas) * 0.25
        return c_skip, c_out, c_in, c_noise

    def denoise_fn(self, x_noisy: Tensor, sigmas: Tensor, **kwargs) -> Tensor:
        c_skip, c_out, c_in, c_noise = self.get_scale_weights(sigmas)
        x_pred = self.net(c_in * x_noisy, c_noise, **kwargs)
        x_denoised = c_skip * x_noisy + c_out * x_pred
        return x_denoised.clamp(-1.0, 1.0)

    def loss_weight(self, sigmas: Tensor) -> Tensor:
        return (sigmas ** 2 + self.sigma_data ** 2) * (sigmas * self.sigma_data) ** -2

    def forward(self, x: Tensor, noise: Tensor = None, **kwargs) -> Tensor:
        batch, device = x.shape[0], x.device
        sigmas = self.sigma_distribution(num_samples=batch, device=device)
        sigmas_padded = sigmas.view(-1, 1, 1)
        noise = default(noise, lambda: torch.randn_like(x))
        x_noisy = x + sigmas_padded * noise
        x_denoised = self.denoise_fn(x_noisy, sigmas=sigmas, **kwargs)
        losses = F.mse_loss(x_denoised, x, reduction="none")
        losses = losses.mean(dim=(1, 2))
        losses = losses * self.loss_weight(sigmas)
        return losses.mean()


class Model1d(nn.Module):
    def __init__(self, diffusion_sigma_distribution, diffusion_sigma_data: float,
                 diffusion_dynamic_threshold: float, **kwargs):
        super().__init__()
        self.unet = UNet1d(**kwargs)
        self.diffusion = Diffusion(
            net=self.unet,
            sigma_distribution=diffusion_sigma_distribution,
            sigma_data=diffusion_sigma_data,
            dynamic_threshold=diffusion_dynamic_threshold,
        )

    def forward(self, x: Tensor, **kwargs) -> Tensor:
        return self.diffusion(x, **kwargs)


class DiffusionUpsampler1d(Model1d):
    def __init__(self, factor: Union[int, Sequence[int]], in_channels: int, *args, **kwargs):
        self.factors = to_list(factor)
        default_kwargs = dict(in_channels=in_channels, context_channels=[in_channels])
        super().__init__(*args, **{**default_kwargs, **kwargs})

    def random_reupsample(self, x: Tensor) -> Tensor:
        batch_size, factors = x.shape[0], self.factors
        # Pick random factor for each batch element
        factor_batch_idx = torch.randint(0, len(factors), (batch_size,))
        x = x.clone()

        for i, factor in enumerate(factors):
            # Pick random items with current factor, skip if 0
            n = torch.count_nonzero(factor_batch_idx == i)
            if n > 0:
                waveforms = x[factor_batch_idx == i]
                # Downsample and reupsample items
                downsampled = downsample(waveforms, factor=factor)
                reupsampled = upsample(downsampled, factor=factor)
                # Save reupsampled version in place
                x[factor_batch_idx == i] = reupsampled
        return x

    def forward(self, x: Tensor, **kwargs) -> Tensor:
        channels = self.random_reupsample(x)
        return self.diffusion(x, channels_list=[channels], **kwargs)


def main():
    upsampler = DiffusionUpsampler1d(
        factor=[2, 4],
        in_channels=1,
        channels=8,
        diffusion_sigma_distribution=LogNormalDistribution(mean=-3.0, std=1.0),
        diffusion_sigma_data=0.1,
        diffusion_dynamic_threshold=0.0,
    )
    t = torch.linspace(0, 1, 256)
    audio = (0.3 * torch.sin(2 * math.pi * 50 * t) + 0.2 * torch.sin(2 * math.pi * 110 * t)).repeat(4, 1, 1)
    loss = upsampler(audio)
    loss.backward()
    return audio, loss, upsampler


audio, loss, upsampler = main()
print(float(loss))

# label: safe
# why: spectrogram() divides the STFT output in place by the window energy when normalized=True, but torch.stft does not need its own output for backward and nothing else has read spec_f yet, so the enhancement loss backpropagates correctly.
# source: https://github.com/pytorch/audio/pull/1013 (torchaudio/functional/functional.py spectrogram)
from typing import Optional

import torch
import torch.nn as nn

torch.manual_seed(0)


def spectrogram(
        waveform: torch.Tensor,
        pad: int,
        window: torch.Tensor,
        n_fft: int,
        hop_length: int,
        win_length: int,
        power: Optional[float],
        normalized: bool
) -> torch.Tensor:
    if pad > 0:
        waveform = torch.nn.functional.pad(waveform, (pad, pad), "constant")

    # pack batch
    shape = waveform.size()
    waveform = waveform.reshape(-1, shape[-1])

    # default values are consistent with librosa.core.spectrum._spectrogram
    spec_f = torch.stft(
        waveform, n_fft, hop_length, win_length, window, True, "reflect", False, True, return_complex=True
    )

    # unpack batch
    spec_f = spec_f.reshape(shape[:-1] + spec_f.shape[-2:])

    if normalized:
        spec_f /= window.pow(2.).sum().sqrt()
    if power is not None:
        if power == 1.0:
            return spec_f.abs()
        return spec_f.abs().pow(power)
    return torch.view_as_real(spec_f)


class Spectrogram(nn.Module):
    def __init__(self, n_fft=64, win_length=None, hop_length=None, pad=0, power=2., normalized=True):
        super().__init__()
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer('window', torch.hann_window(self.win_length))
        self.pad = pad
        self.power = power
        self.normalized = normalized

    def forward(self, waveform):
        return spectrogram(waveform, self.pad, self.window, self.n_fft, self.hop_length,
                           self.win_length, self.power, self.normalized)


class MaskEstimator(nn.Module):
    def __init__(self, n_freq):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_freq, 64), nn.ReLU(), nn.Linear(64, n_freq), nn.Sigmoid())

    def forward(self, spec):
        return self.net(spec.transpose(-1, -2)).transpose(-1, -2)


def main():
    transform = Spectrogram(n_fft=64, power=1.0)
    model = MaskEstimator(33)
    noisy = torch.randn(2, 800)
    clean = noisy * 0.5
    denoiser = nn.Conv1d(1, 1, 9, padding=4)
    enhanced = denoiser(noisy.unsqueeze(1)).squeeze(1)
    enhanced_spec = transform(enhanced)
    masked = model(enhanced_spec) * enhanced_spec
    loss = (masked - transform(clean)).abs().mean()
    loss.backward()
    return masked.detach(), denoiser.weight.grad


masked, denoiser_grad = main()
